// Package netguard is the dial-time guarded network: it keeps fetches away
// from internal addresses (SSRF). It sits below the gates and the tools: the
// network gate (gate/network) judges URLs with it before a call runs, and
// the web tools fetch through its client.
//
// It guards at two points. CheckURL judges a URL before any I/O: only http
// and https, no credentials, and no host that is internal however it is
// written — decimal, octal, hexadecimal and short IPv4 forms are read the
// way browsers read them, IPv6 literals are unmapped, and local names
// (localhost, *.internal, single-label names, cloud metadata names) are
// refused. Policy.Client returns an http.Client that checks again at dial
// time: it resolves the host itself and refuses to connect when any address
// is internal, so DNS rebinding and redirects cannot get in; every redirect
// hop goes through both checks.
//
// An allow-list lets a user reach named internal hosts ("intranet.local",
// "127.0.0.1:8080"); an entry opens that host (and port) and the addresses
// it resolves to, for connections to that host only.
//
// It will not: resolve names in CheckURL (the dial check does that, once per
// connection), use a proxy from the environment, or judge what a page says.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// ErrBlocked is wrapped by every refusal: a URL or an address that may not
// be reached from here.
var ErrBlocked = errors.New("address not allowed")

// ErrBadURL is wrapped, with ErrBlocked, by refusals of URLs that cannot be
// parsed or are malformed.
var ErrBadURL = errors.New("invalid URL")

// ErrTooManyRedirects is wrapped by the client's error when a fetch is
// redirected more often than the policy allows.
var ErrTooManyRedirects = errors.New("too many redirects")

// MaxURLLen is the longest URL accepted, in bytes.
const MaxURLLen = 4096

// Defaults for a zero Policy.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRedirects = 5
)

// Resolver looks up the addresses of a host name. *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy says what the network guard lets through. The zero value (and a
// nil *Policy) refuses every internal address and uses the defaults.
type Policy struct {
	// Allow lists internal hosts the user wants reachable, as "host" (any
	// port) or "host:port": "intranet.local", "127.0.0.1:8080",
	// "[fd00::1]:443". Names match by name, addresses by address, whatever
	// form the URL writes them in.
	Allow []string
	// Domains, when not empty, are the only hosts a URL may name:
	// "example.org" (ports 80 and 443), "example.org:8443",
	// "*.example.net" (every name below example.net) or
	// "*.example.net:443"; the egress proxy's allowlist syntax. Every
	// redirect hop is judged too.
	Domains []string
	// Resolver resolves names at dial time; nil means net.DefaultResolver.
	Resolver Resolver
	// Timeout bounds a whole request, redirects included; zero means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxRedirects is how many redirects a fetch follows; zero means
	// DefaultMaxRedirects, negative means none.
	MaxRedirects int
}

func (p *Policy) resolver() Resolver {
	if p == nil || p.Resolver == nil {
		return net.DefaultResolver
	}
	return p.Resolver
}

func (p *Policy) timeout() time.Duration {
	if p == nil || p.Timeout <= 0 {
		return DefaultTimeout
	}
	return p.Timeout
}

func (p *Policy) maxRedirects() int {
	switch {
	case p == nil || p.MaxRedirects == 0:
		return DefaultMaxRedirects
	case p.MaxRedirects < 0:
		return 0
	}
	return p.MaxRedirects
}

// Validate reports allow-list entries that are not a host or host:port.
// Such entries match nothing.
func (p *Policy) Validate() error {
	if p == nil {
		return nil
	}
	var errs []error
	for _, e := range p.Allow {
		if _, _, err := parseEntry(e); err != nil {
			errs = append(errs, fmt.Errorf("network allow entry %q: %w", e, err))
		}
	}
	return errors.Join(errs...)
}

// allows reports whether the allow-list opens host t on port (a decimal
// port number, never empty).
func (p *Policy) allows(t target, port string) bool {
	if p == nil {
		return false
	}
	for _, e := range p.Allow {
		et, eport, err := parseEntry(e)
		if err != nil || (eport != "" && !samePort(eport, port)) {
			continue
		}
		if et.addr.IsValid() && t.addr.IsValid() && et.addr.Unmap() == t.addr.Unmap() {
			return true
		}
		if !et.addr.IsValid() && !t.addr.IsValid() && et.host == t.host {
			return true
		}
	}
	return false
}

// parseEntry reads an allow-list entry into its host and port ("" for any).
func parseEntry(e string) (target, string, error) {
	e = strings.TrimSpace(e)
	host, port := e, ""
	switch {
	case strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]"):
		host = e[1 : len(e)-1]
	case strings.HasPrefix(e, "[") || strings.Count(e, ":") == 1:
		h, p, err := net.SplitHostPort(e)
		if err != nil {
			return target{}, "", errors.New("want host or host:port")
		}
		if _, err := parsePort(p); err != nil {
			return target{}, "", err
		}
		host, port = h, p
	}
	if host == "" || strings.ContainsAny(host, "/@?#% \t") {
		return target{}, "", errors.New("want host or host:port")
	}
	t, err := canonical(host)
	if err != nil {
		return target{}, "", err
	}
	return t, port, nil
}

// parsePort reads a port number, 1 to 65535.
func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || !allDigits(s) || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return n, nil
}

func samePort(a, b string) bool {
	x, err1 := parsePort(a)
	y, err2 := parsePort(b)
	return err1 == nil && err2 == nil && x == y
}

// inDomains reports whether t on port is on the policy's domain list, or
// there is none.
func (p *Policy) inDomains(t target, port string) bool {
	if p == nil || len(p.Domains) == 0 {
		return true
	}
	for _, e := range p.Domains {
		e = strings.ToLower(strings.TrimSpace(e))
		host, eport := e, ""
		if h, pt, err := net.SplitHostPort(e); err == nil {
			host, eport = h, pt
		} else {
			host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		}
		if eport == "" {
			if port != "80" && port != "443" {
				continue
			}
		} else if !samePort(eport, port) {
			continue
		}
		host = strings.TrimSuffix(host, ".")
		if rest, ok := strings.CutPrefix(host, "*."); ok {
			if strings.HasSuffix(t.host, "."+rest) {
				return true
			}
			continue
		}
		if et, err := canonical(host); err == nil && et.host == t.host {
			return true
		}
	}
	return false
}
