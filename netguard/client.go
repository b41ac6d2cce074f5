package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Client returns an http.Client guarded by the policy:
//
//   - every request, the first and each redirect hop, passes CheckURL first;
//   - every connection is dialed by the guard, which resolves the host with
//     the policy's resolver, refuses when any address is internal (unless
//     the allow-list opens that host and port), dials only the addresses it
//     checked, and checks the socket address once more before connecting;
//   - redirects stop after the policy's limit;
//   - no proxy is used, whatever the environment says.
//
// Each call builds a new transport with its own connection pool: build the
// client once and reuse it.
func (p *Policy) Client() *http.Client {
	d := &dialer{p: p}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.dial,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 16,
	}
	limit := p.maxRedirects()
	return &http.Client{
		Transport: guarded{p: p, next: tr},
		Timeout:   p.timeout(),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > limit {
				return fmt.Errorf("%w: stopped after %d", ErrTooManyRedirects, limit)
			}
			if _, err := CheckURL(req.URL.String(), p); err != nil {
				return fmt.Errorf("redirect to %s refused: %w", req.URL.Redacted(), err)
			}
			return nil
		},
	}
}

// guarded checks every request's URL before handing it to the transport,
// so the client is safe even for a first request nobody checked.
type guarded struct {
	p    *Policy
	next http.RoundTripper
}

func (g guarded) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, err := CheckURL(req.URL.String(), g.p); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return g.next.RoundTrip(req)
}

// dialer connects only to addresses the policy allows.
type dialer struct {
	p *Policy
}

// dial resolves addr's host itself, refuses when any of its addresses is
// internal and the host is not allowed, and dials the checked addresses in
// turn.
func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, malformed("cannot dial " + addr + ": not host:port")
	}
	t, err := checkHost(host, port, d.p)
	if err != nil {
		return nil, err
	}
	pn, err := parsePort(port)
	if err != nil {
		return nil, malformed("cannot dial " + addr + ": bad port")
	}
	allowed := d.p.allows(t, port)
	ips := []netip.Addr{t.addr}
	if !t.addr.IsValid() {
		ips, err = d.p.resolver().LookupNetIP(ctx, ipNetwork(network), t.host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", t.host, err)
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", t.host)
		}
	}
	for _, ip := range ips {
		if what, bad := classify(ip); bad && !allowed {
			return nil, refuse(fmt.Sprintf("the host %s resolves to %s, %s", t.host, ip.WithZone(""), what))
		}
	}
	nd := &net.Dialer{
		Timeout:        10 * time.Second,
		KeepAlive:      30 * time.Second,
		ControlContext: control(allowed),
	}
	var errs []error
	for _, ip := range ips {
		c, err := nd.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(pn)).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// control is the last check, on the address the socket is about to
// connect to.
func control(allowed bool) func(ctx context.Context, network, address string, c syscall.RawConn) error {
	return func(_ context.Context, _, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return refuse("cannot judge the address " + address)
		}
		if what, bad := classify(ap.Addr()); bad && !allowed {
			return refuse(fmt.Sprintf("the address %s is %s", ap.Addr().WithZone(""), what))
		}
		return nil
	}
}

// ipNetwork maps a dial network to a LookupNetIP network.
func ipNetwork(network string) string {
	switch network {
	case "tcp4", "udp4":
		return "ip4"
	case "tcp6", "udp6":
		return "ip6"
	}
	return "ip"
}

// DialContext connects to addr ("host:port") the way the policy's Client
// does: it resolves the host with the policy's resolver, refuses when any
// of its addresses is internal (unless the allow-list opens that host and
// port), dials only the addresses it checked, and checks the socket
// address once more before connecting, so a name that resolves anew to
// an internal address (DNS rebinding) is never reached. Every refusal
// wraps ErrBlocked. The egress proxy dials through it.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return (&dialer{p: p}).dial(ctx, network, addr)
}
