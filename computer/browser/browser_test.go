package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/computer"
	"github.com/reinhq/rein/computer/browser"
	"github.com/reinhq/rein/computer/testsite"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/internal/testenv"
)

func TestAllowlist(t *testing.T) {
	a := browser.Allowlist{Hosts: []string{"shop.example", "127.0.0.1:8080", "*.cdn.example", "[::1]:9"}}
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"https://shop.example/x", true}, {"http://SHOP.EXAMPLE./x", true}, {"https://evil.example/", false},
		{"https://shop.example.evil.test/", false}, {"https://img.cdn.example/a.png", true}, {"https://cdn.example/", false},
		{"http://127.0.0.1:8080/", false}, // loopback needs Loopback, even when listed
		{"file:///etc/passwd", false}, {"ftp://shop.example/", false}, {"javascript:alert(1)", false},
		{"http://localhost/", false}, {"http://[::1]:9/", false},
	} {
		if _, got := a.Allows(c.url); got != c.want {
			t.Errorf("Allows(%q) = %v, want %v", c.url, got, c.want)
		}
	}
	a.Loopback = true
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"http://127.0.0.1:8080/", true}, {"http://127.0.0.1:8081/", false}, {"http://localhost:8080/", false}, {"http://[::1]:9/", true},
	} {
		if _, got := a.Allows(c.url); got != c.want {
			t.Errorf("with loopback: Allows(%q) = %v, want %v", c.url, got, c.want)
		}
	}
	if err := (browser.Allowlist{Hosts: []string{"*"}}).Validate(); err == nil {
		t.Error("a bare * is accepted")
	}
}

func launch(t *testing.T, site *testsite.Site, loopback bool) *browser.Browser {
	t.Helper()
	_, err := browser.Find()
	testenv.Need(t, "chromium", err)
	b, err := browser.Launch(t.Context(), browser.Options{Allow: browser.Allowlist{Hosts: []string{site.Host()}, Loopback: loopback}})
	if err != nil {
		t.Fatal(err)
	}
	dir := b.ProfileDir()
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("profile %s left behind: %v", dir, err)
		}
	})
	return b
}

// The attack page's elements (testsite pages.html "attacks"): each tries
// to hide what a click does. Rein must ask before every one of them, and a
// click on each, with the guards off, really does the harm — so the test
// would notice a check that passes because the attack is broken.
var attacks = []struct {
	name string
	x, y int
	harm func(*testsite.Site) bool
}{
	{"innocent text, aria-label Delete", 160, 125, deleted},
	{"div styled as a button with onclick", 160, 195, deleted},
	{"link Continue in a form posting to /pay", 160, 265, paid},
	{"Ta bort in nested spans, listener added by script", 160, 335, deleted},
	{"invisible overlay submitting the delete form", 160, 405, deleted},
	{"CSS-generated Löschen", 160, 475, deleted},
	{"zero-width space inside Delete", 160, 545, deleted},
	{"formaction overriding an innocent form", 160, 615, deleted},
	{"Wyślij inside a same-origin frame", 160, 685, sent},
}

func deleted(s *testsite.Site) bool { return s.Deleted() }
func paid(s *testsite.Site) bool    { return len(s.Orders()) > 0 }
func sent(s *testsite.Site) bool    { return len(s.Sent()) > 0 }

// legit are clicks on the same page that must not need a human.
var legit = []struct {
	name string
	x, y int
}{
	{"a link to the news", 460, 125},
	{"a text field in the checkout form", 460, 195},
	{"a button under a click-through overlay that says Delete", 460, 265},
	{"Payload viewer", 460, 335},
}

func TestInspectAttacks(t *testing.T) {
	site := testsite.Start()
	defer site.Close()
	b := launch(t, site, true)
	if err := b.Navigate(t.Context(), site.URL()+"/attacks"); err != nil {
		t.Fatal(err)
	}
	p := computer.Policy{Words: computer.NewWords(computer.DefaultWords())}
	for _, c := range attacks {
		t.Run(c.name, func(t *testing.T) {
			a := computer.Action{Kind: computer.Click, X: c.x, Y: c.y}
			el, err := b.Inspect(t.Context(), a)
			if err != nil {
				t.Fatal(err)
			}
			if v := p.Judge(a, el); v.Decision != gate.Ask {
				t.Errorf("%+v judged %s (%s), want ask", el, v.Decision, v.Reason)
			}
		})
	}
	for _, c := range legit {
		t.Run(c.name, func(t *testing.T) {
			a := computer.Action{Kind: computer.Click, X: c.x, Y: c.y}
			el, err := b.Inspect(t.Context(), a)
			if err != nil {
				t.Fatal(err)
			}
			if v := p.Judge(a, el); v.Decision != gate.Allow {
				t.Errorf("%+v judged %s (%s), want allow", el, v.Decision, v.Reason)
			}
		})
	}
}

// TestAttacksThroughLoop clicks each attack through the loop: with the
// guards on and a human who says no, nothing happens on the server; with
// the guards off, the same click does the harm.
func TestAttacksThroughLoop(t *testing.T) {
	site := testsite.Start()
	defer site.Close()
	b := launch(t, site, true)
	for _, c := range attacks {
		t.Run(c.name, func(t *testing.T) {
			for _, off := range []bool{false, true} {
				site.Reset()
				site.AddToCart("Blue mug") // so that a payment can go through
				if err := b.Navigate(t.Context(), site.URL()+"/attacks"); err != nil {
					t.Fatal(err)
				}
				s, err := computer.ParseScript(fmt.Appendf(nil, `{"steps":[{"action":"click","x":%d,"y":%d},{"action":"done"}]}`, c.x, c.y))
				if err != nil {
					t.Fatal(err)
				}
				session, err := computer.New(computer.Config{Model: computer.NewScripted(s), Env: b,
					Approver: approve.Deny{}, Policy: computer.Policy{Off: off}})
				if err != nil {
					t.Fatal(err)
				}
				res := session.Run(t.Context(), "Read the page.")
				if got := c.harm(site); got != off {
					t.Errorf("guards off=%v: harm %v (stop %s, %v)", off, got, res.Stop, res.Err)
				}
				if res.Stop != agent.StopDone {
					t.Errorf("stop %s (%v), want done", res.Stop, res.Err)
				}
				if !off && !res.Declined() {
					t.Errorf("refusals %v, want the click declined", res.Refusals)
				}
			}
		})
	}
}

func TestAllowlistBlocksOtherHosts(t *testing.T) {
	site := testsite.Start()
	defer site.Close()
	b := launch(t, site, true)
	if err := b.Navigate(t.Context(), site.URL()+"/news"); err != nil {
		t.Fatal(err)
	}
	blocked := b.Blocked()
	if len(blocked) < 2 {
		t.Fatalf("blocked %v: want the pixel and the script", blocked)
	}
	for _, r := range blocked {
		if r.Host != site.TrackerHost() || r.Navigation {
			t.Errorf("blocked %+v", r)
		}
	}
	// The link's URL is inspected, and the allowlist refuses it before the
	// click (the screen gate's check); the page's own URL is allowed.
	partner := computer.Action{Kind: computer.Click, X: 140, Y: 365}
	el, err := b.Inspect(t.Context(), partner)
	if err != nil {
		t.Fatal(err)
	}
	if el.Href != site.TrackerURL()+"/offers" || b.AllowsURL(el.Href) || !b.AllowsURL(site.URL()+"/shop") {
		t.Errorf("link %q: allowed %v; the site allowed %v", el.Href, b.AllowsURL(el.Href), b.AllowsURL(site.URL()+"/shop"))
	}
	// A navigation off the allowlist, by a click on a link.
	if err := b.Perform(t.Context(), partner); err != nil {
		t.Fatal(err)
	}
	if got := b.Blocked(); len(got) != 1 || !got[0].Navigation {
		t.Errorf("after the click: blocked %v, want one navigation", got)
	}
	// And by the address bar.
	if err := b.Navigate(t.Context(), site.TrackerURL()+"/offers"); err != nil {
		t.Fatal(err)
	}
	if hits := site.TrackerHits(); len(hits) != 0 {
		t.Errorf("the tracker was reached: %v", hits)
	}
	// The site itself works.
	if !slices.ContainsFunc(b.Requested(), func(u string) bool { return u == site.URL()+"/news" }) {
		t.Errorf("the allowed page was not loaded: %v", b.Requested())
	}
}

func TestLoopbackNeedsConfiguring(t *testing.T) {
	site := testsite.Start()
	defer site.Close()
	b := launch(t, site, false)
	if err := b.Navigate(t.Context(), site.URL()+"/shop"); err != nil {
		t.Fatal(err)
	}
	got := b.Blocked()
	if len(got) != 1 || !got[0].Navigation {
		t.Fatalf("blocked %v: want the page itself", got)
	}
	if len(b.Requested()) != 0 {
		t.Errorf("requests went out: %v", b.Requested())
	}
}

func TestLaunchHonoursContext(t *testing.T) {
	_, err := browser.Find()
	testenv.Need(t, "chromium", err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := browser.Launch(ctx, browser.Options{}); err == nil {
		t.Fatal("launch with a cancelled context succeeded")
	}
}

// Two browsers opened from one engine share nothing a page can see: a
// cookie and a localStorage value the first page sets are not sent or
// readable in the second; each keeps its own allowlist; closing one leaves
// the other working; closing the engine removes the profile.
func TestEngineIsolatesBrowsers(t *testing.T) {
	_, err := browser.Find()
	testenv.Need(t, "chromium", err)
	var mu sync.Mutex
	var seen []string // what /check and /report saw, in order
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/set":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "s3cret", Path: "/"})
			fmt.Fprint(w, `<script>localStorage.setItem("k", "stored")</script>set`)
		case "/check":
			c, _ := r.Cookie("sid")
			mu.Lock()
			seen = append(seen, fmt.Sprintf("cookie=%v", c != nil))
			mu.Unlock()
			fmt.Fprint(w, `<script>fetch("/report?ls=" + localStorage.getItem("k"))</script>check`)
		case "/report":
			mu.Lock()
			seen = append(seen, "ls="+r.URL.Query().Get("ls"))
			mu.Unlock()
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	visit := func(b *browser.Browser, path string) {
		t.Helper()
		if err := b.Navigate(t.Context(), srv.URL+path); err != nil {
			t.Fatal(err)
		}
	}
	// took returns what the server saw since the last call. The page's
	// fetch of /report runs after the load Navigate waits for, so took
	// waits (up to 10s) for want entries before it takes them.
	took := func(want int) []string {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			if len(seen) >= want || time.Now().After(deadline) {
				out := seen
				seen = nil
				mu.Unlock()
				return out
			}
			mu.Unlock()
		}
	}

	e, err := browser.Start(t.Context(), browser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	allow := browser.Options{Allow: browser.Allowlist{Hosts: []string{host}, Loopback: true}}
	a, err := e.Open(t.Context(), allow)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Open(t.Context(), allow)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := e.Open(t.Context(), browser.Options{Allow: browser.Allowlist{Hosts: []string{host}}}) // no loopback
	if err != nil {
		t.Fatal(err)
	}

	visit(a, "/set")
	visit(a, "/check")
	if got := took(2); !slices.Equal(got, []string{"cookie=true", "ls=stored"}) {
		t.Fatalf("the control: in the browser that set them, %v", got)
	}
	visit(b, "/check")
	if got := took(2); !slices.Equal(got, []string{"cookie=false", "ls=null"}) {
		t.Errorf("a second browser of the engine saw the first one's state: %v", got)
	}
	visit(strict, "/check")
	if got := took(0); len(got) != 0 || len(strict.Blocked()) != 1 {
		t.Errorf("a browser without loopback reached the server (%v) or did not report the block", got)
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	visit(b, "/check")
	if got := took(2); !slices.Equal(got, []string{"cookie=false", "ls=null"}) {
		t.Errorf("after the first browser closed, the second: %v", got)
	}
	dir := b.ProfileDir()
	b.Close()
	strict.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("profile %s left behind: %v", dir, err)
	}
}
