package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/computer/browser"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/tool"
)

// These tests drive the web page in a real headless Chromium, as a person
// would: sign in with the token, read the call, answer with the keyboard
// or a click, pull the kill switch. Without Chromium they skip, unless
// REIN_REQUIRE names chromium (or is "all").

// newBrowserFixture is the fixture, whose sessions also have run_bash
// (unsandboxed: the test watches the command's process itself) and echo, a
// read-only tool that returns its text (how a tool's output reaches the
// page).
func newBrowserFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, state: t.TempDir()}
	f.queue = NewQueue(time.Minute)
	build := func(ctx context.Context, req CreateRequest) (guarded.Options, error) {
		o, err := f.build(ctx, req)
		if err != nil {
			return o, err
		}
		o.Tools = append(o.Tools, tool.New(tool.Spec{
			Name: "echo", Description: "Says its text back.", Effect: tool.ReadOnly,
			Schema: []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
		}, func(_ context.Context, a struct {
			Text string `json:"text"`
		}) (string, error) {
			return a.Text, nil
		}))
		o.Sandbox = guarded.Sandbox{Backend: guarded.SandboxNone}
		return o, nil
	}
	host, err := NewLocal(LocalOptions{Build: build, Queue: f.queue, StateDir: filepath.Join(f.state, "serve")})
	if err != nil {
		t.Fatal(err)
	}
	f.host = host
	s, err := New(Options{Host: host, Queue: f.queue, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(s)
	t.Cleanup(func() {
		f.srv.Close()
		f.queue.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = host.Close(ctx)
	})
	return f
}

// tab is one headless Chromium with a fresh profile, and what it saw that
// a page should never cause: dialogs (alert, confirm, prompt), uncaught
// exceptions, console and log messages (a CSP violation is one).
type tab struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	dialogs  []string
	messages []string
}

// chromium starts the browser, or skips the test when there is none.
func chromium(t *testing.T) *tab {
	t.Helper()
	exe, err := browser.Find()
	testenv.Need(t, "chromium", err)
	alloc, cancelAlloc := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-device-scale-factor", "1"),
		chromedp.WindowSize(1100, 900),
	)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts Chromium: no deadline on this first run
		t.Fatalf("start chromium %s: %v", exe, err)
	}
	tb := &tab{t: t, ctx: ctx}
	err = chromedp.Listen(ctx, func(ev any) {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		switch e := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			tb.dialogs = append(tb.dialogs, string(e.Type)+": "+e.Message)
			go func() { _, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{}) }()
		case *runtime.EventExceptionThrown:
			tb.messages = append(tb.messages, "exception: "+e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			tb.messages = append(tb.messages, "console."+string(e.Type))
		case *log.EventEntryAdded:
			tb.messages = append(tb.messages, string(e.Entry.Level)+": "+e.Entry.Text+" ("+e.Entry.URL+")")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, enable := range []func() error{
		func() error { _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(ctx, page.Enable, page.EnableParams{}); return err },
		// A headless tab is never the window with the focus: emulate it, so
		// :focus styles show as a person sees them.
		func() error {
			_, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
			return err
		},
	} {
		if err := enable(); err != nil {
			t.Fatalf("chromium: %v", err)
		}
	}
	return tb
}

// run runs steps with a deadline, failing the test on an error.
func (tb *tab) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatalf("browser: %s: %v", what, err)
	}
}

// get runs one action that returns a value. The index page reloads itself
// every few seconds (a meta refresh), which can pull the document from
// under a read: a read that failed is tried again, twice.
func get[T any](tb *tab, what string, a chromedp.Action[T]) T {
	tb.t.Helper()
	var err error
	for range 3 {
		ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
		var v T
		v, err = chromedp.Run(ctx, a)
		cancel()
		if err == nil {
			return v
		}
		time.Sleep(200 * time.Millisecond)
	}
	tb.t.Fatalf("browser: %s: %v", what, err)
	panic("unreachable")
}

// text is the visible text of the first element sel matches.
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return get(tb, "read "+sel, chromedp.Text(chromedp.CSS(sel)))
}

// eval evaluates js in the page (DevTools is not held by the page's CSP).
func eval[T any](tb *tab, js string) T {
	tb.t.Helper()
	return get(tb, "evaluate "+js, chromedp.Evaluate[T](js))
}

// submit does what sends a form (a click, a key) and waits until the page
// it leads to has loaded: the old page is gone (a mark set on it is) and
// the new one is complete.
func (tb *tab) submit(what string, step chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	eval[bool](tb, `window.__reinTestOld = true`)
	tb.run(what, step)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
		done, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__reinTestOld === undefined && document.readyState === 'complete'`))
		cancel()
		if err == nil && done {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("browser: %s: the next page did not load (%v)", what, err)
		}
	}
}

// seen returns what the tab saw so far.
func (tb *tab) seen() (dialogs, messages []string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.dialogs...), append([]string(nil), tb.messages...)
}

// signIn opens the page, is asked for the token, gives it.
func (tb *tab) signIn(base string) {
	tb.t.Helper()
	tb.run("sign in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), testToken+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#kill-switch`)),
	)
	// The sign-in page comes with a 401 (the page is not served without
	// the token), which Chromium logs; nothing else may be logged.
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, m := range tb.messages {
		if !strings.Contains(m, "status of 401") {
			tb.t.Errorf("the browser logged on the sign-in page: %s", m)
		}
	}
	tb.messages = nil
}

// open loads url and waits until sel is there, loading it again while it
// is not (the page shows what the server has now; a session may be a step
// behind).
func (tb *tab) open(url, sel string) {
	tb.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tb.run("open "+url, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS(`body`)))
		if eval[int](tb, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)) > 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("%s: no %s on the page:\n%s", url, sel, eval[string](tb, `document.body.innerText`))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clean fails the test on any dialog the page opened and any message it
// made the browser log: a violated Content-Security-Policy, a script
// error, a console call.
func (tb *tab) clean() {
	tb.t.Helper()
	dialogs, messages := tb.seen()
	if len(dialogs) > 0 {
		tb.t.Errorf("dialogs opened: %q", dialogs)
	}
	for _, m := range messages {
		tb.t.Errorf("the browser logged: %s", m)
	}
}

// auditRecords reads the session's log.
func (f *fixture) auditRecords(id string) []audit.Record {
	f.t.Helper()
	path, err := f.host.AuditPath(id)
	if err != nil {
		f.t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []audit.Record
	for line := range bytes.Lines(b) {
		var r audit.Record
		if err := json.Unmarshal(line, &r); err != nil {
			f.t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestBrowserDenyThenApprove: a session asks twice. The page shows the
// first call with its tool, arguments, gate and reason, with Deny focused;
// Enter refuses it and the session is told so; Approve lets the second
// run; the session's page shows the timeline `rein audit show` prints and
// the log's verify status.
func TestBrowserDenyThenApprove(t *testing.T) {
	f := newBrowserFixture(t)
	tb := chromium(t)
	id := f.create(`{"turns":[
		{"text":"first staging","calls":[{"tool":"deploy","args":{"env":"staging"}}]},
		{"text":"then prod","calls":[{"tool":"deploy","args":{"env":"prod"}}]},
		{"text":"done"}]}`)
	a := f.approval(id)
	tb.signIn(f.srv.URL)
	tb.open(f.srv.URL+"/", "#approval-"+a.ID)

	art := "#approval-" + a.ID
	for _, c := range []struct{ sel, want string }{
		{art + " code.tool", "deploy"},
		{art + " dd.gate", a.Gate},
		{art + " dd.reason", a.Reason},
	} {
		if got := strings.TrimSpace(tb.text(c.sel)); got != c.want {
			t.Errorf("%s shows %q, want %q", c.sel, got, c.want)
		}
	}
	if a.Gate == "" || a.Reason == "" {
		t.Errorf("the approval has no gate or reason: %+v", a)
	}
	if got := tb.text(art + " pre.args"); !strings.Contains(got, `"env": "staging"`) {
		t.Errorf("the arguments shown: %q", got)
	}
	focused := eval[string](tb, `document.activeElement ? document.activeElement.className + ":" + document.activeElement.value : ""`)
	if focused != "deny:deny" {
		t.Fatalf("the focus is on %q, want the Deny button", focused)
	}
	// Enter on the focused button: Deny.
	tb.submit("deny with Enter", chromedp.KeyEvent(kb.Enter))

	b := f.approval(id)
	for b.ID == a.ID {
		time.Sleep(10 * time.Millisecond)
		b = f.approval(id)
	}
	if !strings.Contains(string(b.Args), "prod") {
		t.Fatalf("second approval is for %s", b.Args)
	}
	tb.open(f.srv.URL+"/", "#approval-"+b.ID)
	if focused := eval[string](tb, `document.activeElement ? document.activeElement.className + ":" + document.activeElement.value : ""`); focused != "deny:deny" {
		t.Errorf("on the second approval the focus is on %q, want the Deny button", focused)
	}
	if n := f.deploys.Load(); n != 0 {
		t.Fatalf("deploy ran %d times after a deny", n)
	}
	tb.submit("approve", chromedp.Click(chromedp.CSS("#approval-"+b.ID+" button.approve")))
	info := f.ended(id)
	if info.Stop == nil || info.Stop.Reason != "done" {
		t.Errorf("stop %+v", info.Stop)
	}
	if n := f.deploys.Load(); n != 1 {
		t.Errorf("deploy ran %d times, want 1 (the approved one)", n)
	}
	if got := f.auditVerdicts(id); strings.Join(got, ",") != "deploy:deny,deploy:allow" {
		t.Errorf("verdicts %v", got)
	}
	var refused, ran int
	for _, r := range f.auditRecords(id) {
		if r.Type == audit.Verdict && r.Decision.Is(gate.Deny) && strings.HasPrefix(r.Content, "Refused:") {
			refused++ // what the model was told
		}
		if r.Type == audit.Result && r.Tool == "deploy" && strings.Contains(r.Content, "deployed prod") {
			ran++
		}
		if r.Type == audit.Verdict && (r.Approval == nil || !strings.HasPrefix(r.Approval.By, "serve:web")) {
			t.Errorf("the verdict on %s does not say the web page answered: %+v", r.Args, r.Approval)
		}
	}
	if refused != 1 || ran != 1 {
		t.Errorf("the model was told of %d refusals and %d runs, want 1 and 1", refused, ran)
	}

	tb.open(f.srv.URL+"/sessions/"+id, "#timeline")
	if got := tb.text("#verify"); got != "intact" {
		t.Errorf("verify status %q", got)
	}
	if got := tb.text("p.verify"); !strings.Contains(got, "complete") {
		t.Errorf("verify line %q does not say the log is complete", got)
	}
	want, _ := showLog(info.Audit)
	if got := tb.text("#timeline"); strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Errorf("the timeline on the page:\n%s\nwant what rein audit show prints:\n%s", got, want)
	}
	tb.clean()
}

// TestBrowserKillSwitch: a session runs a command that would sleep for
// five minutes; the kill switch on the page stops the session, and the
// command's process is gone.
func TestBrowserKillSwitch(t *testing.T) {
	f := newBrowserFixture(t)
	tb := chromium(t)
	work := t.TempDir()
	cmd := `echo $$ > pid && exec sleep 300`
	script, _ := json.Marshal(map[string]any{"turns": []any{
		map[string]any{"text": "wait", "calls": []any{map[string]any{"tool": "run_bash", "args": map[string]any{"command": cmd}}}},
		map[string]any{"text": "done"},
	}})
	body, _ := json.Marshal(map[string]any{"task": "sleep", "model": string(script), "workdir": work})
	code, out := f.do("POST", "/v1/sessions", string(body))
	if code != 201 {
		t.Fatalf("create: %d %s", code, out)
	}
	var c struct{ ID string }
	_ = json.Unmarshal([]byte(out), &c)
	id := c.ID

	// The command asks (the default mode asks before run_bash): yes, on the page.
	a := f.approval(id)
	tb.signIn(f.srv.URL)
	tb.open(f.srv.URL+"/", "#approval-"+a.ID)
	if got := tb.text("#approval-" + a.ID + " pre.args"); !strings.Contains(got, cmd) {
		t.Errorf("the page shows the command as %q", got)
	}
	tb.submit("approve", chromedp.Click(chromedp.CSS("#approval-"+a.ID+" button.approve")))
	var pid int
	deadline := time.Now().Add(20 * time.Second)
	for pid == 0 {
		if b, err := os.ReadFile(filepath.Join(work, "pid")); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			i, _ := f.host.Session(id)
			t.Fatalf("the command did not start: %+v", i)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the command's process %d is not running before the kill switch: %v", pid, err)
	}
	tb.open(f.srv.URL+"/", "#kill-switch")
	tb.submit("kill switch", chromedp.Click(chromedp.CSS("#kill-switch")))
	info := f.ended(id)
	if info.Stop == nil || info.Stop.Reason != "aborted" {
		t.Errorf("after the kill switch: %+v", info.Stop)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still there after the kill switch (kill 0: %v)", pid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.open(f.srv.URL+"/sessions/"+id, "#timeline")
	if got := tb.text("strong.stop"); got != "aborted" {
		t.Errorf("the session page says stop %q", got)
	}
	if got := tb.text("#verify"); got != "intact" {
		t.Errorf("verify status %q", got)
	}
	if got := tb.text("#timeline"); !strings.Contains(got, "kill switch") {
		t.Errorf("the timeline does not say why it stopped:\n%s", got)
	}
	if eval[int](tb, `document.querySelectorAll('#abort').length`) != 0 {
		t.Errorf("an ended session still offers Abort")
	}
	tb.clean()
}

// xssAttacks try to run script, load something, restyle the page or fool
// a terminal. Each one that ran would set window.__pwned or open a dialog.
var xssAttacks = []string{
	`<script>window.__pwned='script';alert('script')</script>`,
	`"><img src=x onerror="window.__pwned='img';alert('img')">`,
	`' onmouseover='window.__pwned=1' autofocus onfocus='window.__pwned=2`,
	`<a href="javascript:window.__pwned='link'">click me</a>`,
	`<style>body{display:none}</style><div style="background:url(javascript:alert(1))">styled</div>`,
	`<svg onload="window.__pwned='svg'"><script>window.__pwned='svg-script'</script></svg>`,
	`<iframe srcdoc="<script>parent.__pwned='frame'</script>"></iframe>`,
	`</pre></textarea><math><mi xlink:href="javascript:alert(1)">math</mi></math>`,
	"\x1b]8;;https://evil.example\x07hyperlink\x1b]8;;\x07 \x1b[2J\x1b[31mred",
	"\u202egnp.exe",
}

// TestBrowserXSS puts every attack in a session's task, the model's text,
// a call's arguments and a tool's output; the approval page and the
// session's page show each as text, and none of them ran.
func TestBrowserXSS(t *testing.T) {
	f := newBrowserFixture(t)
	tb := chromium(t)
	turns := []any{}
	for _, a := range xssAttacks {
		turns = append(turns, map[string]any{"text": a, "calls": []any{map[string]any{"tool": "echo", "args": map[string]any{"text": a}}}})
	}
	all := strings.Join(xssAttacks, "\n")
	turns = append(turns,
		map[string]any{"text": "deploy", "calls": []any{map[string]any{"tool": "deploy", "args": map[string]any{"env": all}}}},
		map[string]any{"text": "done"})
	script, _ := json.Marshal(map[string]any{"turns": turns})
	body, _ := json.Marshal(map[string]any{"task": "task " + xssAttacks[0] + xssAttacks[1], "model": string(script), "workdir": t.TempDir()})
	code, out := f.do("POST", "/v1/sessions", string(body))
	if code != 201 {
		t.Fatalf("create: %d %s", code, out)
	}
	var c struct{ ID string }
	_ = json.Unmarshal([]byte(out), &c)
	a := f.approval(c.ID)

	tb.signIn(f.srv.URL)
	tb.open(f.srv.URL+"/", "#approval-"+a.ID)
	checkNothingRan(t, tb, "/")
	shown := tb.text("#approval-" + a.ID + " pre.args")
	for _, want := range []string{`"env": "<script>window.__pwned='script';alert('script')</script>\n\"><img src=x onerror=\"window.__pwned='img'`,
		`href=\"javascript:window.__pwned='link'\"`, `<style>body{display:none}</style>`, `<svg onload=\"window.__pwned='svg'\">`,
		`\u001b]8;;https://evil.example\u0007hyperlink`, `\u202egnp.exe`} {
		if !strings.Contains(shown, want) {
			t.Errorf("the approval's arguments do not show %q as text:\n%s", want, shown)
		}
	}
	tb.submit("approve", chromedp.Click(chromedp.CSS("#approval-"+a.ID+" button.approve")))
	f.ended(c.ID)

	tb.open(f.srv.URL+"/sessions/"+c.ID, "#timeline")
	checkNothingRan(t, tb, "/sessions/"+c.ID)
	timeline := tb.text("#timeline")
	for _, want := range []string{`<script>window.__pwned='script'`, `"><img src=x onerror="window.__pwned='img'`,
		`<svg onload="window.__pwned='svg'">`, `\x1b]8;;https://evil.example\x07hyperlink`, `\u202egnp.exe`} {
		if !strings.Contains(timeline, want) {
			t.Errorf("the timeline does not show %q as text:\n%s", want, timeline)
		}
	}
	if body := eval[string](tb, `document.body.innerText`); !strings.Contains(body, "Task: task "+xssAttacks[0]+xssAttacks[1]) {
		t.Errorf("the task is not shown as text:\n%s", body)
	}
	tb.clean()
}

// checkNothingRan looks at the page in the browser: no attack's element,
// attribute, script, dialog or style took effect, and its text is visible.
func checkNothingRan(t *testing.T, tb *tab, path string) {
	t.Helper()
	r := eval[struct {
		Pwned    bool     `json:"pwned"`
		Elements []string `json:"elements"`
		Attrs    []string `json:"attrs"`
		Hidden   bool     `json:"hidden"`
		Escapes  bool     `json:"escapes"`
	}](tb, `(() => {
		const tags = new Set(['HTML','HEAD','META','TITLE','LINK','BODY','HEADER','A','FORM','BUTTON','MAIN','SECTION','H2','H3','SMALL','CODE','ARTICLE','DL','DT','DD','PRE','P','INPUT','LABEL','TABLE','THEAD','TBODY','TR','TH','TD','STRONG','BR']);
		const els = [...document.querySelectorAll('*')];
		return {
			pwned: window.__pwned !== undefined || window.parent.__pwned !== undefined,
			elements: els.filter(e => !tags.has(e.tagName)).map(e => e.tagName),
			attrs: els.flatMap(e => [...e.attributes].filter(a => /^on|^style$|^srcdoc$/i.test(a.name) || /^\s*javascript:/i.test(a.value)).map(a => e.tagName + ' ' + a.name)),
			hidden: getComputedStyle(document.body).display === 'none' || document.body.innerText.length < 100,
			escapes: /[\x00-\x08\x0b-\x1f\x7f\u202e]/.test(document.body.innerText),
		};
	})()`)
	if r.Pwned {
		t.Errorf("%s: an attack's script ran", path)
	}
	if len(r.Elements) > 0 {
		t.Errorf("%s: elements not the page's own: %v", path, r.Elements)
	}
	if len(r.Attrs) > 0 {
		t.Errorf("%s: attributes an attack set: %v", path, r.Attrs)
	}
	if r.Hidden {
		t.Errorf("%s: an attack's style hid the page", path)
	}
	if r.Escapes {
		t.Errorf("%s: a control character or bidi override reached the page's text", path)
	}
}

// TestBrowserCheckCanFail shows checkNothingRan and the tab's watch are
// not blind: the same attacks on a page that does not escape them (and has
// no CSP) are caught.
func TestBrowserCheckCanFail(t *testing.T) {
	tb := chromium(t)
	var html strings.Builder
	html.WriteString("<!doctype html><html><body><main><p>" + strings.Repeat("filler text ", 20) + "</p>")
	for _, a := range xssAttacks {
		html.WriteString("<p>" + a + "</p>")
	}
	html.WriteString("</main></body></html>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, html.String())
	}))
	defer srv.Close()
	tb.run("open the unescaped page", chromedp.Navigate(srv.URL), chromedp.WaitReady(chromedp.CSS("body")))
	pwned := eval[bool](tb, `window.__pwned !== undefined`)
	tags := eval[[]string](tb, `[...document.querySelectorAll('script,img,svg,iframe,style')].map(e => e.tagName)`)
	if len(tags) == 0 {
		t.Errorf("the unescaped page has none of the attacks' elements: the check would see nothing")
	}
	dialogs, _ := tb.seen()
	if !pwned || len(dialogs) == 0 {
		t.Errorf("no attack ran on a page without escaping or CSP: the watch is blind")
	}
}

// TestBrowserScreenshots writes the screenshots docs/serve.md shows, from a
// real run: the approval page while a session waits for a deploy, and that
// session's timeline once it ended. It runs only when REIN_SCREENSHOTS
// names the directory to write them to:
//
//	REIN_SCREENSHOTS=$PWD/docs go test ./serve -run TestBrowserScreenshots
func TestBrowserScreenshots(t *testing.T) {
	dir := os.Getenv("REIN_SCREENSHOTS")
	if dir == "" {
		t.Skip("set REIN_SCREENSHOTS=DIR to write the page's screenshots there")
	}
	f := newBrowserFixture(t)
	tb := chromium(t)
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "CHANGELOG.md"), []byte("## 1.4.0\n- faster start\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	create := func(task, script string) string {
		body, _ := json.Marshal(map[string]any{"task": task, "model": script, "workdir": work})
		code, out := f.do("POST", "/v1/sessions", string(body))
		if code != 201 {
			t.Fatalf("create: %d %s", code, out)
		}
		var c struct{ ID string }
		_ = json.Unmarshal([]byte(out), &c)
		return c.ID
	}
	create("Watch the nightly build and report when it is green",
		`{"turns":[{"text":"Waiting for the build.","calls":[{"tool":"wait","args":{"ms":600000}}]},{"text":"done"}]}`)
	id := create("Release 1.4.0: check the changelog, push the tag, deploy to production",
		`{"turns":[
		{"text":"Reading the changelog first.","calls":[{"tool":"read_file","args":{"path":"CHANGELOG.md"}}]},
		{"text":"The changelog is ready. Pushing the release.","calls":[{"tool":"run_bash","args":{"command":"git push --force origin main"}}]},
		{"text":"Not pushing then. Deploying 1.4.0.","calls":[{"tool":"deploy","args":{"env":"production"}}]},
		{"text":"Deployed 1.4.0 to production; the push to main was refused, so the tag is not pushed."}]}`)
	tb.signIn(f.srv.URL)
	shot := func(name string) {
		png := get(tb, "screenshot", chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", filepath.Join(dir, name))
	}
	for {
		a := f.approval(id)
		tb.open(f.srv.URL+"/", "#approval-"+a.ID)
		if a.Tool == "deploy" {
			shot("serve-approval.png")
			tb.submit("approve", chromedp.Click(chromedp.CSS("#approval-"+a.ID+" button.approve")))
			break
		}
		tb.submit("deny", chromedp.KeyEvent(kb.Enter))
		for len(f.queue.Pending(id)) > 0 && f.queue.Pending(id)[0].ID == a.ID {
			time.Sleep(10 * time.Millisecond)
		}
	}
	f.ended(id)
	tb.open(f.srv.URL+"/sessions/"+id, "#timeline")
	shot("serve-timeline.png")
	tb.clean()
}
