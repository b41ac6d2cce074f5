package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// page GETs a page with the token's cookie.
func (f *fixture) page(path string) (int, http.Header, string) {
	f.t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: testToken})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestPageEscapesEverything puts attacks in a call's arguments, its
// session's task and a tool's output, and checks that the page shows each
// as text: no element, attribute, URL or style of theirs survives.
func TestPageEscapesEverything(t *testing.T) {
	attacks := []string{
		`<script>alert(1)</script>`,
		`"><img src=x onerror=alert(1)>`,
		`<a href="javascript:alert(1)">click</a>`,
		`<style>body{background:url(https://evil.example/x)}</style>`,
		`<svg onload=alert(1)><use href="data:image/svg+xml,x"/></svg>`,
		"\x1b]8;;https://evil.example\x07link\x1b]8;;\x07 \x1b[2J",
		"\u202etxt.exe",
	}
	f := newFixture(t, time.Minute)
	args, _ := json.Marshal(map[string]any{"env": strings.Join(attacks, " ")})
	script, _ := json.Marshal(map[string]any{"turns": []any{
		map[string]any{"text": strings.Join(attacks, " "), "calls": []any{map[string]any{"tool": "deploy", "args": json.RawMessage(args)}}},
		map[string]any{"text": "done"},
	}})
	id := f.create(string(script))
	f.approval(id)
	for _, path := range []string{"/", "/sessions/" + id} {
		code, h, body := f.page(path)
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "script-src") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		checkMarkup(t, path, body)
		for _, bad := range []string{"<script", "<img", "<svg", "<style>body", `href="javascript:`, "\x1b", "\u202e", "<use"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: %q reached the page unescaped", path, bad)
			}
		}
		if !strings.Contains(body, `id="kill-switch"`) {
			t.Errorf("%s: no kill switch", path)
		}
		if !strings.Contains(body, `value="deny" class="deny" autofocus`) {
			t.Errorf("%s: Deny does not have the focus", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") && !strings.Contains(body, `\u003cscript\u003e`) {
			t.Errorf("%s: the attack is not shown as text", path)
		}
	}
}

// checkMarkup parses the page as a browser would: every element is one the
// templates write, no attribute is an event handler or a style, and every
// link stays on this server.
func checkMarkup(t *testing.T, path, body string) {
	t.Helper()
	allowed := map[string]bool{"html": true, "head": true, "meta": true, "title": true, "link": true, "body": true, "header": true,
		"a": true, "form": true, "button": true, "main": true, "section": true, "h2": true, "h3": true, "small": true, "code": true,
		"article": true, "dl": true, "dt": true, "dd": true, "pre": true, "p": true, "input": true, "label": true, "table": true,
		"thead": true, "tbody": true, "tr": true, "th": true, "td": true, "strong": true, "br": true}
	z := html.NewTokenizer(strings.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		if !allowed[tok.Data] {
			t.Errorf("%s: element <%s> on the page", path, tok.Data)
		}
		for _, a := range tok.Attr {
			switch {
			case strings.HasPrefix(a.Key, "on"), a.Key == "style", a.Key == "srcdoc":
				t.Errorf("%s: attribute %s=%q on <%s>", path, a.Key, a.Val, tok.Data)
			case a.Key == "href" || a.Key == "action" || a.Key == "formaction" || a.Key == "src":
				if !strings.HasPrefix(a.Val, "/") || strings.HasPrefix(a.Val, "//") {
					t.Errorf("%s: %s=%q leaves the server", path, a.Key, a.Val)
				}
			}
		}
	}
}

// TestPageFormsAnswerAndAbort drives the page's forms as a browser would.
func TestPageFormsAnswerAndAbort(t *testing.T) {
	f := newFixture(t, time.Minute)
	id := f.create(deployScript)
	a := f.approval(id)
	post := func(path string, form url.Values, site string) int {
		req, _ := http.NewRequest("POST", f.srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", site)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: testToken})
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Another site's form, with the cookie, is refused.
	if code := post("/ui/approvals/"+a.ID, url.Values{"token": {a.Token}, "decision": {"approve"}}, "cross-site"); code != http.StatusForbidden {
		t.Errorf("a cross-site post: %d", code)
	}
	if code := post("/ui/approvals/"+a.ID, url.Values{"token": {a.Token}, "decision": {"approve"}}, "same-origin"); code != http.StatusSeeOther {
		t.Fatalf("approve on the page: %d", code)
	}
	f.ended(id)
	if got := f.auditVerdicts(id); len(got) != 1 || got[0] != "deploy:allow" {
		t.Errorf("verdicts %v", got)
	}
	// Without the cookie, the page asks for the token.
	resp, err := http.Get(f.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), `name="token"`) || strings.Contains(string(b), "Approval queue") {
		t.Errorf("no cookie: %d %s", resp.StatusCode, b)
	}
	// The kill switch stops a running session.
	w := f.create(`{"turns":[{"text":"go","calls":[{"tool":"wait","args":{}}]},{"text":"done"}]}`)
	waitStep(t, f, w)
	if code := post("/ui/abort", nil, "same-origin"); code != http.StatusSeeOther {
		t.Fatalf("kill switch: %d", code)
	}
	if i := f.ended(w); i.Stop == nil || i.Stop.Reason != "aborted" {
		t.Errorf("after the kill switch: %+v", i.Stop)
	}
	_, _, body := f.page("/sessions/" + w)
	if !strings.Contains(body, `id="verify">intact</strong>`) || !strings.Contains(body, "aborted") {
		t.Errorf("session page after abort lacks verify status or stop:\n%s", body)
	}
}
