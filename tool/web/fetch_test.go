package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/web"
)

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

func (s *server) hostPort() string { return strings.TrimPrefix(s.URL, "http://") }

func (s *server) port() string {
	_, p, _ := net.SplitHostPort(s.hostPort())
	return p
}

// serve answers every request with a content type and body.
func serve(ctype, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		} else {
			w.Header()["Content-Type"] = nil // no sniffing by net/http
		}
		_, _ = io.WriteString(w, body)
	}
}

func run(t *testing.T, tl tool.Tool, u string) (string, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"url": u})
	return tl.Run(t.Context(), args)
}

// allowing returns webfetch with the servers' host:ports on the allow-list.
func allowing(servers ...*server) tool.Tool {
	p := &netguard.Policy{}
	for _, s := range servers {
		p.Allow = append(p.Allow, s.hostPort())
	}
	return web.Fetch(p)
}

func TestSpec(t *testing.T) {
	t.Parallel()
	spec := web.Fetch(nil).Spec()
	if spec.Name != "webfetch" || spec.Effect != tool.ReadOnly || spec.Roles["url"] != tool.RoleURL {
		t.Errorf("spec = %+v", spec)
	}
	var s map[string]any
	if err := json.Unmarshal(spec.Schema, &s); err != nil || s["additionalProperties"] != false {
		t.Errorf("schema %s: %v", spec.Schema, err)
	}
}

func TestFetchArgs(t *testing.T) {
	t.Parallel()
	tl := web.Fetch(nil)
	for _, args := range []string{`{}`, `{"url":""}`, `{"url":"  "}`, `{"url":"https://example.com/","x":1}`, `{"url":1}`,
		`{"url":"https://example.com/` + strings.Repeat("a", 4096) + `"}`} {
		if _, err := tl.Run(t.Context(), json.RawMessage(args)); !errors.Is(err, tool.ErrArgs) {
			t.Errorf("Run(%.60s) = %v, want ErrArgs", args, err)
		}
	}
}

const page = `<!doctype html><html><head><title>Burrows</title><script>var k = "script text";</script></head>
<body><h1>Gopher burrows</h1><p>Tunnels   run <a href="/deep">deep</a>.</p>
<div hidden>hidden text</div><p style="display:none">styled away</p><ul><li>one</li><li>two</li></ul></body></html>`

func TestFetchHTML(t *testing.T) {
	t.Parallel()
	s := newServer(t, serve("text/html; charset=utf-8", page))
	got, err := run(t, allowing(s), s.URL+"/burrows")
	if err != nil {
		t.Fatal(err)
	}
	want := "URL: " + s.URL + "/burrows\n\nBurrows\n\n# Gopher burrows\n\nTunnels run deep (" + s.URL + "/deep).\n\n- one\n- two"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestFetchTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, ctype, body, want string
	}{
		{"plain", "text/plain", "  line one\n\tline two  \n", "  line one\n\tline two  \n"},
		{"json", "application/json", `{"a": [1, 2]}`, `{"a": [1, 2]}`},
		{"problem json", "application/problem+json", `{"title":"x"}`, `{"title":"x"}`},
		{"xml", "application/xml", "<a>b</a>", "<a>b</a>"},
		{"markdown", "text/markdown; charset=utf-8", "# T\n", "# T\n"},
		{"latin1 declared", "text/plain; charset=iso-8859-1", "caf\xe9", "café"},
		{"undeclared not utf-8", "text/plain", "caf\xe9", "café"},
		{"json invalid utf-8", "application/json", "\"caf\xe9\"", "\"caf\uFFFD\""},
		{"bom", "text/plain", "\xef\xbb\xbfhi", "hi"},
		{"html meta charset", "text/html", `<meta charset="windows-1252"><p>caf` + "\xe9</p>", "café"},
		{"html sniffed", "", "<!DOCTYPE html><p>sniffed</p>", "sniffed"},
		{"text sniffed", "", "just text", "just text"},
		{"xhtml", "application/xhtml+xml", "<html><body><p>x<script>y</script></p></body></html>", "x"},
		{"empty html", "text/html", "<script>only</script>", "(the page has no readable text)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, serve(tt.ctype, tt.body))
			got, err := run(t, allowing(s), s.URL+"/")
			if err != nil {
				t.Fatal(err)
			}
			if want := "URL: " + s.URL + "/\n\n" + tt.want; got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestFetchUnsupported(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ ctype, body string }{
		{"image/png", "\x89PNG\r\n\x1a\n"},
		{"application/pdf", "%PDF-1.7"},
		{"application/octet-stream", "\x00\x01"},
		{"", "\x00\x01\x02binary"},
		{"", "%PDF-1.4 sniffed"},
	} {
		s := newServer(t, serve(tt.ctype, tt.body))
		if got, err := run(t, allowing(s), s.URL+"/"); !errors.Is(err, web.ErrUnsupported) {
			t.Errorf("%q: got %q, %v; want ErrUnsupported", tt.ctype, got, err)
		}
	}
}

func TestFetchStatus(t *testing.T) {
	t.Parallel()
	for _, code := range []int{http.StatusNotFound, http.StatusForbidden, http.StatusInternalServerError, http.StatusNotModified} {
		s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(code)
			_, _ = io.WriteString(w, "error page text")
		})
		got, err := run(t, allowing(s), s.URL+"/")
		if !errors.Is(err, web.ErrStatus) || got != "" {
			t.Errorf("status %d: got %q, %v; want ErrStatus", code, got, err)
			continue
		}
		if !strings.Contains(err.Error(), strconv.Itoa(code)) {
			t.Errorf("status %d: error %q does not give the status", code, err)
		}
	}
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "made")
	})
	if got, err := run(t, allowing(s), s.URL+"/"); err != nil || !strings.HasSuffix(got, "\n\nmade") {
		t.Errorf("201: got %q, %v", got, err)
	}
}

func TestFetchCap(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", (web.MaxBodyBytes+1<<20)/16) // 3 MB
	s := newServer(t, serve("text/plain", big))
	got, err := run(t, allowing(s), s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	header, body, ok := strings.Cut(got, "\n\n")
	if !ok || !strings.Contains(header, "cut") {
		t.Errorf("header %q does not say the text was cut", header)
	}
	if len(body) != web.MaxBodyBytes || body != big[:web.MaxBodyBytes] {
		t.Errorf("body is %d bytes, want the first %d", len(body), web.MaxBodyBytes)
	}

	exact := newServer(t, serve("text/plain", big[:web.MaxBodyBytes]))
	got, err = run(t, allowing(exact), exact.URL+"/")
	if err != nil || strings.Contains(got[:200], "cut") {
		t.Errorf("a body of exactly the cap: %.200q, %v; want no note", got, err)
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
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "end")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusFound)
	})
}

func TestFetchRedirects(t *testing.T) {
	t.Parallel()
	s := redirector(t)
	tl := allowing(s)
	got, err := run(t, tl, s.URL+"/r/5")
	if want := "URL: " + s.URL + "/r/0\n\nend"; err != nil || got != want {
		t.Errorf("5 redirects: %q, %v; want %q", got, err, want)
	}
	if _, err := run(t, tl, s.URL+"/r/6"); !errors.Is(err, netguard.ErrTooManyRedirects) {
		t.Errorf("6 redirects: err = %v, want ErrTooManyRedirects", err)
	}
}

// webfetch says itself that its output is a web page, and which one: the
// final URL after redirects, as a typed source; a failed fetch has none.
func TestFetchSource(t *testing.T) {
	t.Parallel()
	s := redirector(t)
	tl, ok := allowing(s).(interface {
		RunSourced(context.Context, json.RawMessage) (string, model.Source, error)
	})
	if !ok {
		t.Fatal("webfetch does not say where its output came from")
	}
	args, _ := json.Marshal(map[string]string{"url": s.URL + "/r/2"})
	text, src, err := tl.RunSourced(t.Context(), args)
	want := model.Source{Kind: model.SourceWebPage, Location: s.URL + "/r/0"}
	if err != nil || src != want || !strings.HasSuffix(text, "end") {
		t.Errorf("got %q, %+v, %v; want a web page at %s", text, src, err, want.Location)
	}
	args, _ = json.Marshal(map[string]string{"url": s.URL + "/r/6"})
	if _, src, err := tl.RunSourced(t.Context(), args); err == nil || src != (model.Source{}) {
		t.Errorf("a failed fetch: source %+v, err %v", src, err)
	}
}

// With only the first loopback port allowed, a redirect to another port is
// refused at the redirect; the second server sees nothing.
func TestFetchRedirectToOtherPort(t *testing.T) {
	t.Parallel()
	target := newServer(t, serve("text/plain", "internal secret"))
	first := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/admin", http.StatusMovedPermanently)
	})
	got, err := run(t, allowing(first), first.URL+"/")
	if !errors.Is(err, netguard.ErrBlocked) || got != "" {
		t.Fatalf("got %q, %v; want ErrBlocked", got, err)
	}
	if !strings.Contains(err.Error(), "redirect to "+target.URL+"/admin") {
		t.Errorf("error %q does not name the redirect", err)
	}
	if target.hits.Load() != 0 {
		t.Errorf("the redirect target saw %d requests", target.hits.Load())
	}
}

type mapResolver map[string]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ip, ok := m[host]; ok {
		return []netip.Addr{ip}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// A name that passes the URL check but resolves to loopback is refused when
// the client dials.
func TestFetchRebind(t *testing.T) {
	t.Parallel()
	s := newServer(t, serve("text/plain", "internal secret"))
	p := &netguard.Policy{Resolver: mapResolver{"rebind.test": netip.MustParseAddr("127.0.0.1")}}
	u := "http://rebind.test:" + s.port() + "/"
	if _, err := netguard.CheckURL(u, p); err != nil {
		t.Fatalf("CheckURL(%s) = %v; the name must pass the check before I/O", u, err)
	}
	got, err := run(t, web.Fetch(p), u)
	if !errors.Is(err, netguard.ErrBlocked) || got != "" {
		t.Errorf("got %q, %v; want ErrBlocked", got, err)
	}
	if s.hits.Load() != 0 {
		t.Errorf("the server saw %d requests", s.hits.Load())
	}
}

func TestFetchRefused(t *testing.T) {
	t.Parallel()
	tl := web.Fetch(nil)
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://localhost/", "file:///etc/passwd", "http://0x7f.1/"} {
		if _, err := run(t, tl, u); !errors.Is(err, netguard.ErrBlocked) {
			t.Errorf("%s: err = %v, want ErrBlocked", u, err)
		}
	}
}

func TestFetchTimeout(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	p := &netguard.Policy{Allow: []string{s.hostPort()}, Timeout: 50 * time.Millisecond}
	if got, err := run(t, web.Fetch(p), s.URL+"/"); err == nil {
		t.Errorf("got %q, want a timeout error", got)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	args, _ := json.Marshal(map[string]string{"url": s.URL + "/"})
	if _, err := allowing(s).Run(ctx, args); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}
