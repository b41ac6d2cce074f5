package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/proxy"

	"github.com/reinhq/rein/netguard"
)

// hosts is a resolver the test controls: names to addresses.
type hosts map[string][]string

func (h hosts) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range h[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return out, nil
}

// countingListener counts the connections a test server accepts, so a
// test can tell that a refused request never reached it.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// upstream is a test server on loopback, reached by the proxy under the
// name good.test, which the guard's allow-list opens as an internal host.
type upstream struct {
	srv  *httptest.Server
	ln   *countingListener
	port int
}

func newUpstream(t *testing.T, tlsOn bool, h http.Handler) *upstream {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	ln := &countingListener{Listener: srv.Listener}
	srv.Listener = ln
	if tlsOn {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return &upstream{srv: srv, ln: ln, port: srv.Listener.Addr().(*net.TCPAddr).Port}
}

// recorder keeps what the proxy reports.
type recorder struct {
	mu    sync.Mutex
	conns []Conn
}

func (r *recorder) record(c Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conns = append(r.conns, c)
}

func (r *recorder) all() []Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Conn(nil), r.conns...)
}

// startProxy serves a proxy for cfg on loopback and returns its address.
func startProxy(t *testing.T, cfg Config) (string, *recorder) {
	t.Helper()
	rec := &recorder{}
	cfg.Record = rec.record
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), rec
}

func guard(allowInternal ...string) *netguard.Policy {
	return &netguard.Policy{
		Allow: allowInternal,
		Resolver: hosts{
			"good.test":        {"127.0.0.1"},
			"sub.good.test":    {"127.0.0.1"},
			"loop.test":        {"127.0.0.1"},                 // on the list, but resolves to loopback
			"rebind.test":      {"198.51.100.9", "127.0.0.1"}, // one public, one internal answer
			"metadata.test":    {"169.254.169.254"},
			"v6loop.test":      {"::1"},
			"mapped.test":      {"::ffff:127.0.0.1"},
			"private.test":     {"10.0.0.5"},
			"off.example.test": {"127.0.0.1"},
		},
	}
}

func httpClient(proxyAddr string, roots *x509.CertPool) *http.Client {
	pu := &url.URL{Scheme: "http", Host: proxyAddr}
	return &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(pu),
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "example.com"},
	}}
}

func TestProxyAllowsListedHosts(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("rein ", 5000)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body+r.URL.Path) })
	plain := newUpstream(t, false, h)
	secure := newUpstream(t, true, h)
	roots := x509.NewCertPool()
	roots.AddCert(secure.srv.Certificate())
	addr, rec := startProxy(t, Config{
		Allow: []string{"good.test:" + strconv.Itoa(plain.port), "*.good.test:" + strconv.Itoa(secure.port)},
		Guard: guard("good.test", "sub.good.test"),
	})
	c := httpClient(addr, roots)

	for _, u := range []string{
		"http://good.test:" + strconv.Itoa(plain.port) + "/plain",
		"https://sub.good.test:" + strconv.Itoa(secure.port) + "/tunnel",
	} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("GET %s through the proxy: %v", u, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasSuffix(string(got), u[strings.LastIndex(u, "/"):]) || len(got) < len(body) {
			t.Fatalf("GET %s: %d, %d bytes", u, resp.StatusCode, len(got))
		}
	}
	// SOCKS5, the name sent as a name.
	d, err := proxy.SOCKS5("tcp", addr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	sc := &http.Client{Transport: &http.Transport{DialContext: d.(proxy.ContextDialer).DialContext}}
	resp, err := sc.Get("http://good.test:" + strconv.Itoa(plain.port) + "/socks")
	if err != nil {
		t.Fatalf("GET through SOCKS5: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasSuffix(string(got), "/socks") {
		t.Fatalf("through SOCKS5: %q", got[len(got)-10:])
	}
	c.CloseIdleConnections()
	sc.CloseIdleConnections()

	waitFor(t, func() bool { return len(rec.all()) == 3 })
	protos := map[string]bool{}
	for _, r := range rec.all() {
		if !r.Allowed || r.Reason != "" || r.Down < int64(len(body)) || r.Up == 0 || !strings.HasPrefix(r.Addr, "127.0.0.1:") {
			t.Errorf("record %+v: want allowed, no reason, the bytes each way and the address dialed", r)
		}
		protos[r.Proto] = true
	}
	if !protos["http"] || !protos["connect"] || !protos["socks5"] {
		t.Errorf("records by protocol: %v", protos)
	}
}

// waitFor polls cond: a connection's record comes when the proxy has
// closed it, just after the client is done.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		sleep()
	}
	t.Fatal("condition not met")
}

// TestProxyRefuses is the attack table: each way to reach a host the
// session did not allow, by each protocol, must be refused before any
// byte reaches the server, and recorded with its reason.
func TestProxyRefuses(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	port := strconv.Itoa(up.port)
	addr, rec := startProxy(t, Config{
		Allow: []string{
			"good.test:" + port, "loop.test:" + port, "rebind.test:" + port, "metadata.test:80",
			"v6loop.test:" + port, "mapped.test:" + port, "private.test:" + port,
			"127.0.0.1:" + port, "*.example.test:443",
		},
		Guard: guard("good.test"), // only good.test may be internal
	})
	attacks := []struct {
		name, target string
		why          error // what the record's reason wraps, checked by text below
		reason       string
	}{
		{"off the list", "evil.test:" + port, nil, "not on the allowlist"},
		{"listed host, other port", "good.test:22", nil, "not port 22"},
		{"listed wildcard, other port", "off.example.test:" + port, nil, "not port"},
		{"name resolving to loopback", "loop.test:" + port, nil, "loopback"},
		{"rebinding: one answer internal", "rebind.test:" + port, nil, "loopback"},
		{"metadata address", "metadata.test:80", nil, "link-local"},
		{"IPv6 loopback", "v6loop.test:" + port, nil, "loopback"},
		{"IPv4-mapped loopback", "mapped.test:" + port, nil, "loopback"},
		{"private address", "private.test:" + port, nil, "private"},
		{"loopback literal on the list", "127.0.0.1:" + port, nil, "loopback"},
		{"loopback literal off the list", "127.0.0.2:" + port, nil, "not on the allowlist"},
		{"localhost", "localhost:" + port, nil, "not on the allowlist"},
	}
	for _, a := range attacks {
		host, p, _ := net.SplitHostPort(a.target)
		pn, _ := strconv.Atoi(p)
		t.Run(a.name+"/connect", func(t *testing.T) {
			code := connectStatus(t, addr, a.target)
			if code != http.StatusForbidden {
				t.Errorf("CONNECT %s: %d, want 403", a.target, code)
			}
		})
		t.Run(a.name+"/http", func(t *testing.T) {
			resp, err := httpClient(addr, nil).Get("http://" + a.target + "/")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden || strings.Contains(string(b), "secret") {
				t.Errorf("GET http://%s/: %d %q, want 403", a.target, resp.StatusCode, b)
			}
		})
		t.Run(a.name+"/socks5", func(t *testing.T) {
			d, _ := proxy.SOCKS5("tcp", addr, nil, proxy.Direct)
			c, err := d.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(pn)))
			if err == nil {
				c.Close()
				t.Errorf("SOCKS5 to %s: connected", a.target)
			}
		})
	}
	if n := up.ln.n.Load(); n != 0 {
		t.Errorf("the server was reached %d times", n)
	}
	waitFor(t, func() bool { return len(rec.all()) == 3*len(attacks) })
	for _, r := range rec.all() {
		var want string
		for _, a := range attacks {
			if h, _, _ := net.SplitHostPort(a.target); h == r.Host {
				want = a.reason
			}
		}
		if r.Allowed || r.Addr != "" || want == "" || !strings.Contains(r.Reason, want) {
			t.Errorf("record %+v: want refused, nothing dialed, a reason with %q", r, want)
		}
	}
}

// connectStatus sends CONNECT target to the proxy and returns the status.
func connectStatus(t *testing.T, proxyAddr, target string) int {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestProxyBadRequests(t *testing.T) {
	t.Parallel()
	addr, _ := startProxy(t, Config{Allow: []string{"good.test"}, Guard: guard("good.test")})
	for _, req := range []string{
		"GET / HTTP/1.1\r\nHost: good.test\r\n\r\n",                  // not a proxy request
		"GET https://good.test/ HTTP/1.1\r\nHost: good.test\r\n\r\n", // https without CONNECT
		"CONNECT good.test HTTP/1.1\r\nHost: good.test\r\n\r\n",      // no port
		"CONNECT good.test:0 HTTP/1.1\r\n\r\n",
		"NONSENSE\r\n\r\n",
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, req)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%q: %v %v, want 400", req, resp, err)
		}
	}
}

func TestProxyLimits(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 1<<20)
	up := newUpstream(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) }))
	target := "good.test:" + strconv.Itoa(up.port)

	t.Run("connections", func(t *testing.T) {
		t.Parallel()
		addr, rec := startProxy(t, Config{Allow: []string{target}, Guard: guard("good.test"), MaxConns: 2})
		for i, want := range []int{200, 200, 403, 403} {
			if got := connectStatus(t, addr, target); got != want {
				t.Errorf("connection %d: %d, want %d", i+1, got, want)
			}
		}
		waitFor(t, func() bool { return len(rec.all()) == 4 })
		refused := 0
		for _, r := range rec.all() {
			if !r.Allowed && strings.Contains(r.Reason, "limit of 2 proxied connections") {
				refused++
			}
		}
		if refused != 2 {
			t.Errorf("records: %+v", rec.all())
		}
	})
	for _, proto := range []string{"http", "connect"} {
		t.Run("bytes/"+proto, func(t *testing.T) {
			t.Parallel()
			addr, rec := startProxy(t, Config{Allow: []string{target}, Guard: guard("good.test"), MaxBytes: 256 << 10})
			var c *http.Client
			u := "http://" + target + "/"
			if proto == "connect" {
				// A tunnel to the plain server: the client speaks HTTP
				// inside CONNECT.
				c = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					conn, err := net.Dial("tcp", addr)
					if err != nil {
						return nil, err
					}
					fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\n\r\n", target)
					br := bufio.NewReader(conn)
					resp, err := http.ReadResponse(br, nil)
					if err != nil || resp.StatusCode != 200 {
						return nil, errors.Join(err, errors.New("CONNECT refused"))
					}
					return conn, nil
				}}}
			} else {
				c = httpClient(addr, nil)
			}
			resp, err := c.Get(u)
			n := 0
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				n = len(b)
				resp.Body.Close()
			}
			if n >= len(big) {
				t.Fatalf("%d bytes came through a limit of 256 KiB", n)
			}
			waitFor(t, func() bool { return len(rec.all()) == 1 })
			r := rec.all()[0]
			if !strings.Contains(r.Reason, "limit of 262144 proxied bytes") || r.Down > 256<<10+1 {
				t.Errorf("record %+v: want the byte limit as the reason", r)
			}
			// And the session is spent: the next connection is refused.
			if got := connectStatus(t, addr, target); got != 403 {
				t.Errorf("after the limit: %d, want 403", got)
			}
		})
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{Allow: []string{"*.com"}},
		{Allow: []string{"example.org:99999"}},
		{Allow: []string{"ok.example"}, Guard: &netguard.Policy{Allow: []string{"bad host/x"}}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
}
