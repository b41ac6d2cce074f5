package netguard

import (
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// refusal is the error of every refusal. It wraps ErrBlocked, and ErrBadURL
// when the URL itself is malformed. Its text names the host and the reason,
// never the allow-list.
type refusal struct {
	reason string
	bad    bool
}

func (r *refusal) Error() string { return r.reason }

func (r *refusal) Is(target error) bool {
	return target == ErrBlocked || (r.bad && target == ErrBadURL)
}

func refuse(reason string) error { return &refusal{reason: reason} }
func malformed(reason string) error {
	return &refusal{reason: reason, bad: true}
}

// target is a host in canonical form.
type target struct {
	host string     // lower-case ASCII name, or the address's text
	addr netip.Addr // valid when the host is an address
}

// CheckURL judges raw before any I/O and returns it parsed, with the host
// in canonical form (lower-case ASCII, or the address in standard notation)
// so that what is fetched is what was checked. Every error wraps ErrBlocked;
// a URL that cannot be parsed also wraps ErrBadURL. A nil p allows nothing
// internal.
func CheckURL(raw string, p *Policy) (*url.URL, error) {
	u, t, err := judge(raw, p)
	if err != nil {
		return nil, err
	}
	out := *u
	out.Scheme = strings.ToLower(u.Scheme)
	out.Host = t.host
	if t.addr.Is6() {
		out.Host = "[" + t.host + "]"
	}
	if u.Port() != "" {
		out.Host += ":" + u.Port()
	}
	return &out, nil
}

// Check is CheckURL for a caller that needs only the answer (the network
// gate): the same refusals, without building the canonical URL.
func Check(raw string, p *Policy) error {
	_, _, err := judge(raw, p)
	return err
}

// judge is CheckURL without the canonical copy: the URL as parsed and its
// host in canonical form. The gate needs only the answer.
func judge(raw string, p *Policy) (*url.URL, target, error) {
	if len(raw) > MaxURLLen {
		return nil, target{}, malformed("the URL is longer than 4096 bytes")
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f || c == '\\' {
			return nil, target{}, malformed("the URL contains spaces, control characters or backslashes")
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, target{}, malformed("the URL cannot be parsed")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		if scheme == "" {
			return nil, target{}, malformed("the URL has no scheme: write it in full, starting with https://")
		}
		return nil, target{}, refuse("the scheme " + scheme + ": is not allowed, only http and https")
	case u.Opaque != "" || u.Host == "":
		return nil, target{}, malformed("the URL has no host: write it as " + scheme + "://host/path")
	case u.User != nil:
		return nil, target{}, refuse("the URL contains a user name or password")
	case strings.ContainsRune(u.Host, '%'):
		return nil, target{}, refuse("the host is percent-encoded or has a zone")
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	} else if _, err := parsePort(port); err != nil {
		return nil, target{}, malformed("the " + err.Error())
	}
	t, err := checkHost(u.Hostname(), port, p)
	if err != nil {
		return nil, target{}, err
	}
	if !p.inDomains(t, port) {
		return nil, target{}, refuse("the host " + t.host + " is not on the session's domain list ([network] domains)")
	}
	return u, t, nil
}

// checkHost puts host in canonical form and refuses it when it is internal
// and the policy does not allow it on port.
func checkHost(host, port string, p *Policy) (target, error) {
	t, err := canonical(host)
	if err != nil {
		return t, err
	}
	var what string
	if t.addr.IsValid() {
		w, bad := classify(t.addr)
		if !bad {
			return t, nil
		}
		what = w
	} else if what = internalName(t.host); what == "" {
		return t, nil
	}
	if p.allows(t, port) {
		return t, nil
	}
	return t, refuse("the host " + t.host + " is " + what)
}

// canonical puts a host (without brackets or port) in canonical form:
// IPv6 and IPv4 addresses in any encoding become addresses; names become
// lower-case ASCII without a trailing dot. It refuses what is neither.
func canonical(host string) (target, error) {
	if strings.ContainsRune(host, ':') {
		addr, err := netip.ParseAddr(host)
		switch {
		case err != nil || !addr.Is6():
			return target{}, malformed("the host is not a valid IPv6 address")
		case addr.Zone() != "":
			return target{}, refuse("the host is an IPv6 address with a zone")
		}
		return target{host: addr.String(), addr: addr}, nil
	}
	if !isASCII(host) {
		a, err := idna.Lookup.ToASCII(host)
		if err != nil || !isASCII(a) {
			return target{}, malformed("the host is not a valid international domain name")
		}
		host = a
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || strings.HasSuffix(host, ".") {
		return target{}, malformed("the host is empty or ends in more than one dot")
	}
	if endsInNumber(host) {
		addr, err := parseIPv4(host)
		if err != nil {
			return target{}, malformed("the host " + host + " looks like a numeric address but is malformed")
		}
		return target{host: addr.String(), addr: addr}, nil
	}
	if err := checkName(host); err != nil {
		return target{}, err
	}
	return target{host: host}, nil
}

// checkName accepts host names of letters, digits, hyphens and underscores
// in labels of 1 to 63 bytes, 253 bytes in all.
func checkName(host string) error {
	if len(host) > 253 {
		return malformed("the host name is longer than 253 bytes")
	}
	label := 0
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case c == '.':
			if label == 0 {
				return malformed("the host name has an empty label")
			}
			label = 0
			continue
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return malformed("the host name contains characters a host name cannot have")
		}
		label++
		if label > 63 {
			return malformed("the host name has a label longer than 63 bytes")
		}
	}
	if label == 0 {
		return malformed("the host name has an empty label")
	}
	return nil
}

// Suffixes of names that live on a local or internal network, or that name
// cloud metadata services.
var internalSuffixes = [...]string{
	"localhost", "localdomain", "local", "internal", "intranet", "lan",
	"home", "corp", "private", "arpa", "metadata.goog",
}

// Domains whose names map to any address written into them, or that exist
// to rebind: they make internal addresses look like public names.
var rebindSuffixes = [...]string{
	"nip.io", "sslip.io", "xip.io", "nip.direct", "traefik.me", "localtest.me",
	"lvh.me", "vcap.me", "localho.st", "local.gd", "lacolhost.com", "1u.ms",
	"rbndr.us",
}

// internalName returns what makes a canonical host name internal, or "".
func internalName(host string) string {
	if !strings.Contains(host, ".") {
		return "a single-label name, which only the local network resolves"
	}
	for _, s := range internalSuffixes {
		if hasDomainSuffix(host, s) {
			return "a local, internal or metadata name (." + s + ")"
		}
	}
	for _, s := range rebindSuffixes {
		if hasDomainSuffix(host, s) {
			return "a name under a domain that maps names to arbitrary addresses"
		}
	}
	return ""
}

func hasDomainSuffix(host, suffix string) bool {
	return host == suffix || (len(host) > len(suffix) && host[len(host)-len(suffix)-1] == '.' && strings.HasSuffix(host, suffix))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
