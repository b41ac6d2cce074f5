package netguard

import (
	"errors"
	"net/netip"
	"net/url"
	"testing"
)

// FuzzCheckURL: CheckURL never panics, every error wraps ErrBlocked, an
// allowed URL is http(s) without credentials, and whenever it allows a URL
// whose host reads as an address (net/netip or the inet_aton reading), that
// address is not internal — for the host as written and as returned.
func FuzzCheckURL(f *testing.F) {
	for _, urls := range refused {
		for _, u := range urls {
			f.Add(u)
		}
	}
	for _, u := range allowed {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := CheckURL(raw, nil)
		if err != nil {
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("CheckURL(%q) = %v, which does not wrap ErrBlocked", raw, err)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("CheckURL(%q) allowed scheme %q", raw, u.Scheme)
		}
		if u.User != nil {
			t.Fatalf("CheckURL(%q) allowed userinfo", raw)
		}
		for _, host := range []string{u.Hostname(), hostOf(raw)} {
			if ip, ok := readAddr(host); ok && Internal(ip) {
				t.Fatalf("CheckURL(%q) allowed internal address %s (host %q)", raw, ip, host)
			}
		}
		// What CheckURL returns must pass again, unchanged.
		again, err := CheckURL(u.String(), nil)
		if err != nil || again.String() != u.String() {
			t.Fatalf("CheckURL(%q) = %s, but that gives %v, %v", raw, u, again, err)
		}
	})
}

// hostOf returns the host of raw as net/url reads it, or "".
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func readAddr(host string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip, true
	}
	for len(host) > 0 && host[len(host)-1] == '.' {
		host = host[:len(host)-1]
	}
	if ip, err := parseIPv4(host); err == nil {
		return ip, true
	}
	return netip.Addr{}, false
}
