package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// DefaultPorts are the ports an allow-list entry without a port opens:
// HTTP and HTTPS.
var defaultPorts = [...]int{80, 443}

// Rule is one parsed allow-list entry.
type Rule struct {
	// Host is the host in canonical form (lower-case ASCII without a
	// trailing dot, or an address in standard notation); for a wildcard,
	// the domain below which every name matches.
	Host string
	// Wildcard: "*.example.net" matches every name below example.net, but
	// not example.net itself.
	Wildcard bool
	// Port is the one port the entry opens, or 0 for 80 and 443.
	Port int
}

// String writes the rule back as an entry.
func (r Rule) String() string {
	h := r.Host
	if r.Wildcard {
		h = "*." + h
	}
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if r.Port != 0 {
		h += ":" + strconv.Itoa(r.Port)
	}
	return h
}

// ParseRule reads an allow-list entry: "example.org" (ports 80 and 443),
// "example.org:8443", "*.example.net" or "*.example.net:443" (every name
// below example.net), an address "198.51.100.7:8080" or "[2001:db8::1]".
// A wildcard covers whole labels only ("*.net" is refused as too wide:
// at least two labels after the star).
func ParseRule(entry string) (Rule, error) {
	e := strings.TrimSpace(entry)
	host, port := e, ""
	switch {
	case strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]"):
		host = e[1 : len(e)-1]
	case strings.HasPrefix(e, "[") || strings.Count(e, ":") == 1:
		h, p, err := net.SplitHostPort(e)
		if err != nil {
			return Rule{}, errors.New("want host, host:port, *.domain or *.domain:port")
		}
		host, port = h, p
	}
	var r Rule
	if port != "" {
		n, err := parsePort(port)
		if err != nil {
			return Rule{}, err
		}
		r.Port = n
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Wildcard = true
		host = rest
		if strings.Count(strings.TrimSuffix(host, "."), ".") < 1 {
			return Rule{}, fmt.Errorf("wildcard %q is too wide: name a domain of at least two labels (*.example.net)", entry)
		}
	}
	h, err := canonicalHost(host)
	if err != nil {
		return Rule{}, err
	}
	if r.Wildcard && strings.Contains(h, ":") {
		return Rule{}, errors.New("a wildcard needs a domain name, not an address")
	}
	if _, err := netip.ParseAddr(h); err == nil && r.Wildcard {
		return Rule{}, errors.New("a wildcard needs a domain name, not an address")
	}
	r.Host = h
	return r, nil
}

// ParseRules reads every entry, reporting all the bad ones at once.
func ParseRules(entries []string) ([]Rule, error) {
	var errs []error
	rules := make([]Rule, 0, len(entries))
	for _, e := range entries {
		r, err := ParseRule(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("sandbox.network allow entry %q: %w", e, err))
			continue
		}
		rules = append(rules, r)
	}
	return rules, errors.Join(errs...)
}

// canonicalHost lower-cases a name (IDNA to ASCII), drops a trailing dot,
// and writes an address in standard notation. Names with characters that
// have no place in a host are refused.
func canonicalHost(host string) (string, error) {
	if host == "" {
		return "", errors.New("empty host")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return "", errors.New("an address with a zone")
		}
		return a.Unmap().String(), nil
	}
	if strings.ContainsAny(host, "/@?#%*:[] \t\\") {
		return "", fmt.Errorf("%q is not a host name", host)
	}
	a, err := idna.Lookup.ToASCII(strings.TrimSuffix(host, "."))
	if err != nil || a == "" {
		return "", fmt.Errorf("%q is not a host name", host)
	}
	return strings.ToLower(a), nil
}

// parsePort reads a port number, 1 to 65535.
func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return n, nil
}

// match reports whether the rule opens host (canonical) on port.
func (r Rule) match(host string, port int) bool {
	if r.Port == 0 {
		if !slices.Contains(defaultPorts[:], port) {
			return false
		}
	} else if r.Port != port {
		return false
	}
	if r.Wildcard {
		return strings.HasSuffix(host, "."+r.Host)
	}
	return host == r.Host
}

// errNotListed and errPort say why a host was refused before any I/O.
var (
	errNotListed = errors.New("not on the allowlist")
	errPort      = errors.New("port not allowed")
)

// allowed judges host:port against rules: nil, or an error wrapping
// errNotListed or errPort that says which.
func allowed(rules []Rule, host string, port int) error {
	listed := false
	for _, r := range rules {
		if r.match(host, port) {
			return nil
		}
		listed = listed || r.match(host, r.Port) || (r.Port == 0 && r.match(host, 443))
	}
	if listed {
		return fmt.Errorf("%w: %s is on the allowlist, but not port %d", errPort, host, port)
	}
	return fmt.Errorf("%w: %s", errNotListed, host)
}
