package netguard

import (
	"context"
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
)

// fakeResolver maps names to addresses and counts lookups.
type fakeResolver struct {
	names   map[string][]netip.Addr
	lookups atomic.Int32
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.lookups.Add(1)
	if ips, ok := r.names[host]; ok {
		return ips, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func resolver(m map[string]string) *fakeResolver {
	r := &fakeResolver{names: map[string][]netip.Addr{}}
	for name, ips := range m {
		for _, ip := range strings.Split(ips, ",") {
			r.names[name] = append(r.names[name], netip.MustParseAddr(ip))
		}
	}
	return r
}

// server is a loopback test server that counts the requests it saw.
type server struct {
	*httptest.Server
	hits atomic.Int32
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func hello(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }

// hostPort returns the server's "127.0.0.1:port".
func (s *server) hostPort() string { return strings.TrimPrefix(s.URL, "http://") }

func (s *server) port() string {
	_, p, _ := net.SplitHostPort(s.hostPort())
	return p
}

func get(t *testing.T, c *http.Client, u string) (string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestClientAllowedLoopback(t *testing.T) {
	t.Parallel()
	s := newServer(t, hello)
	c := (&Policy{Allow: []string{s.hostPort()}}).Client()
	for _, u := range []string{s.URL + "/", "http://2130706433:" + s.port() + "/", "http://0x7f.1:" + s.port() + "/"} {
		body, err := get(t, c, u)
		if err != nil || body != "hello" {
			t.Errorf("GET %s = %q, %v; want hello", u, body, err)
		}
	}
}

func TestClientRefusesLoopback(t *testing.T) {
	t.Parallel()
	allowed := newServer(t, hello)
	other := newServer(t, hello)
	c := (&Policy{Allow: []string{allowed.hostPort()}}).Client()
	for _, u := range []string{other.URL + "/", "http://localhost:" + other.port() + "/", "http://[::ffff:127.0.0.1]:" + other.port() + "/"} {
		if _, err := get(t, c, u); !errors.Is(err, ErrBlocked) {
			t.Errorf("GET %s: err = %v, want ErrBlocked", u, err)
		}
	}
	if n := other.hits.Load(); n != 0 {
		t.Errorf("the refused server saw %d requests, want 0", n)
	}
}

// A redirect from an allowed loopback port to another loopback port is
// refused at the redirect, and the error says so.
func TestClientRedirectToOtherPort(t *testing.T) {
	t.Parallel()
	target := newServer(t, hello)
	first := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/secret", http.StatusFound)
	})
	c := (&Policy{Allow: []string{first.hostPort()}}).Client()
	_, err := get(t, c, first.URL+"/")
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v, want ErrBlocked", err)
	}
	if want := "redirect to " + target.URL + "/secret refused"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v; want it to name the redirect (%q)", err, want)
	}
	if first.hits.Load() != 1 || target.hits.Load() != 0 {
		t.Errorf("hits: first %d, target %d; want 1 and 0", first.hits.Load(), target.hits.Load())
	}
}

// A public-looking name that resolves to loopback passes CheckURL and is
// refused when the client dials: the server sees nothing.
func TestClientRebindRefusedAtDial(t *testing.T) {
	t.Parallel()
	s := newServer(t, hello)
	for _, ips := range []string{"127.0.0.1", "::1", "::ffff:127.0.0.1", "8.8.8.8,127.0.0.1", "169.254.169.254"} {
		r := resolver(map[string]string{"rebind.test": ips})
		p := &Policy{Resolver: r, Allow: []string{s.hostPort()}}
		u := "http://rebind.test:" + s.port() + "/"
		if _, err := CheckURL(u, p); err != nil {
			t.Fatalf("CheckURL(%s) = %v; the name must look public before the dial", u, err)
		}
		_, err := get(t, p.Client(), u)
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("%s -> %s: err = %v, want ErrBlocked", u, ips, err)
		}
		if r.lookups.Load() == 0 {
			t.Errorf("%s -> %s: the resolver was not asked, so the dial check did not run", u, ips)
		}
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("the server saw %d requests, want 0", n)
	}
}

// An allowed name may reach the internal addresses it resolves to; another
// name resolving to the same address may not.
func TestClientAllowedName(t *testing.T) {
	t.Parallel()
	s := newServer(t, hello)
	r := resolver(map[string]string{"app.internal": "127.0.0.1", "other.test": "127.0.0.1"})
	c := (&Policy{Resolver: r, Allow: []string{"app.internal:" + s.port()}}).Client()
	if body, err := get(t, c, "http://app.internal:"+s.port()+"/"); err != nil || body != "hello" {
		t.Errorf("GET app.internal = %q, %v; want hello", body, err)
	}
	if _, err := get(t, c, "http://other.test:"+s.port()+"/"); !errors.Is(err, ErrBlocked) {
		t.Errorf("GET other.test: err = %v, want ErrBlocked", err)
	}
	if n := s.hits.Load(); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

// redirector serves /r/N, which redirects to /r/N-1; /r/0 answers "end".
func redirector(t *testing.T) *server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if n == 0 {
			_, _ = io.WriteString(w, "end")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusFound)
	})
}

func TestClientRedirectLimit(t *testing.T) {
	t.Parallel()
	s := redirector(t)
	tests := []struct {
		max, hops int
		ok        bool
	}{
		{0, 5, true}, {0, 6, false}, // the default is 5
		{2, 2, true}, {2, 3, false},
		{-1, 0, true}, {-1, 1, false},
	}
	for _, tt := range tests {
		c := (&Policy{Allow: []string{s.hostPort()}, MaxRedirects: tt.max}).Client()
		body, err := get(t, c, fmt.Sprintf("%s/r/%d", s.URL, tt.hops))
		if tt.ok && (err != nil || body != "end") {
			t.Errorf("max %d, %d hops: %q, %v; want end", tt.max, tt.hops, body, err)
		}
		if !tt.ok && !errors.Is(err, ErrTooManyRedirects) {
			t.Errorf("max %d, %d hops: err = %v, want ErrTooManyRedirects", tt.max, tt.hops, err)
		}
	}
}

func TestClientNoProxy(t *testing.T) {
	t.Parallel()
	c := (&Policy{}).Client()
	g, ok := c.Transport.(guarded)
	if !ok {
		t.Fatalf("Transport is %T, want guarded", c.Transport)
	}
	tr, ok := g.next.(*http.Transport)
	if !ok || tr.Proxy != nil {
		t.Errorf("transport %T has a proxy function; it must ignore HTTP_PROXY", g.next)
	}
	if c.Timeout != DefaultTimeout {
		t.Errorf("Timeout = %v, want %v", c.Timeout, DefaultTimeout)
	}
}

// The dialer and its socket check refuse internal addresses on their own,
// for clients whose requests never went through CheckURL.
func TestDialerRefuses(t *testing.T) {
	t.Parallel()
	s := newServer(t, hello)
	d := &dialer{p: &Policy{Resolver: resolver(nil)}}
	for _, addr := range []string{s.hostPort(), "0x7f.1:" + s.port(), "[::1]:" + s.port(), "localhost:" + s.port(), "127.0.0.1.1:80"} {
		c, err := d.dial(t.Context(), "tcp", addr)
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("dial %s: err = %v, want ErrBlocked", addr, err)
		}
		if c != nil {
			c.Close()
		}
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("server saw %d requests", n)
	}
}

func TestControl(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr    string
		allowed bool
		ok      bool
	}{
		{"127.0.0.1:80", false, false},
		{"[::ffff:127.0.0.1]:80", false, false},
		{"[::1]:80", false, false},
		{"[fe80::1%eth0]:80", false, false},
		{"10.0.0.1:443", false, false},
		{"not-an-address", false, false},
		{"not-an-address", true, false},
		{"8.8.8.8:443", false, true},
		{"[2606:4700::1]:443", false, true},
		{"127.0.0.1:80", true, true},
	}
	for _, tt := range tests {
		err := control(tt.allowed)(t.Context(), "tcp", tt.addr, nil)
		if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrBlocked)) {
			t.Errorf("control(%v)(%s) = %v; want ok %v", tt.allowed, tt.addr, err, tt.ok)
		}
	}
}

// A first request that skipped CheckURL is still checked before any I/O.
func TestClientChecksFirstRequest(t *testing.T) {
	t.Parallel()
	r := resolver(map[string]string{"localhost": "127.0.0.1"})
	c := (&Policy{Resolver: r}).Client()
	for _, u := range []string{"http://localhost:1/", "http://user@example.com/"} {
		if _, err := get(t, c, u); !errors.Is(err, ErrBlocked) {
			t.Errorf("GET %s: err = %v, want ErrBlocked", u, err)
		}
	}
	if n := r.lookups.Load(); n != 0 {
		t.Errorf("resolver asked %d times; the URL check must refuse first", n)
	}
}

// The client's error is a *url.Error, as net/http callers expect, and still
// wraps ErrBlocked.
func TestClientErrorShape(t *testing.T) {
	t.Parallel()
	_, err := get(t, (&Policy{}).Client(), "http://127.0.0.1:1/")
	var ue *url.Error
	if !errors.As(err, &ue) || !errors.Is(err, ErrBlocked) {
		t.Errorf("err = %#v; want a *url.Error wrapping ErrBlocked", err)
	}
}

// One client serves concurrent fetches to allowed and refused hosts.
func TestClientConcurrent(t *testing.T) {
	t.Parallel()
	s := newServer(t, hello)
	r := resolver(map[string]string{"rebind.test": "127.0.0.1"})
	c := (&Policy{Resolver: r, Allow: []string{s.hostPort()}}).Client()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if i%2 == 0 {
				if body, err := get(t, c, s.URL+"/"); err != nil || body != "hello" {
					t.Errorf("GET allowed = %q, %v", body, err)
				}
				return
			}
			if _, err := get(t, c, "http://rebind.test:"+s.port()+"/"); !errors.Is(err, ErrBlocked) {
				t.Errorf("GET rebind.test: err = %v, want ErrBlocked", err)
			}
		})
	}
	wg.Wait()
}
