package browser

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Allowlist says which hosts the browser may load anything from. It is
// closed: a host that no entry names is refused. Entries are a host name
// or IP ("shop.example"), a host and port ("127.0.0.1:8080": that port
// only), or a wildcard for subdomains ("*.example.com": not example.com
// itself). A loopback host (localhost, *.localhost, 127.0.0.0/8, ::1) is
// refused even when listed, unless Loopback is set.
type Allowlist struct {
	Hosts    []string
	Loopback bool
}

// Allows reports whether a request to raw may go out, and where it was
// going (host, or host:port), for the report.
func (a Allowlist) Allows(raw string) (where string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	if u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss" {
		return u.Scheme + ":", false
	}
	where = strings.ToLower(u.Host)
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "ws": "80", "https": "443", "wss": "443"}[u.Scheme]
	}
	if host == "" || loopback(host) && !a.Loopback {
		return where, false
	}
	for _, e := range a.Hosts {
		e = strings.ToLower(strings.TrimSpace(e))
		eh, ep := e, ""
		if h, p, err := net.SplitHostPort(e); err == nil {
			eh, ep = h, p
		}
		eh = strings.Trim(eh, "[]")
		if ep != "" && ep != port {
			continue
		}
		if rest, ok := strings.CutPrefix(eh, "*."); ok {
			if strings.HasSuffix(host, "."+rest) {
				return where, true
			}
			continue
		}
		if eh == host {
			return where, true
		}
	}
	return where, false
}

// Validate rejects entries that cannot match anything.
func (a Allowlist) Validate() error {
	for _, e := range a.Hosts {
		e = strings.TrimSpace(e)
		if e == "" || strings.Contains(e, "/") || e == "*" || e == "*." {
			return fmt.Errorf("allowlist entry %q: give a host, host:port or *.domain", e)
		}
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}
