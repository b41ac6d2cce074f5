// Package browser is computer's environment over headless Chromium, driven
// through the DevTools protocol (github.com/chromedp/chromedp): screenshots,
// clicks at (x, y), typing, scrolling and keys, and the inspector that tells
// rein which element an action would touch.
//
// Launch starts a Chromium process with a fresh profile in a temporary
// directory, removed by Close, for one Browser. An Engine (Start) is one
// such process from which Open makes many, each in a browser context of
// its own: nothing a page stores is seen by the next. Every request of
// the page — navigations and sub-resources, redirects included — is
// paused by the Fetch domain and let through only when its host is on the
// Allowlist; the others are failed and reported through Blocked. Pop-ups
// and new windows are refused (--block-new-web-contents) and all frames
// run in the page's process, so the interception sees them.
//
// What it will not do: it does not resolve names to check where they point
// (an allowlisted name is trusted), it does not intercept WebSocket traffic
// of an allowed page, and it does not sandbox Chromium beyond Chromium's own
// flags: run it in a container or VM for isolation.
package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/reinhq/rein/computer"
)

//go:embed inspect.js
var inspectJS string

// Default screen size: the size Anthropic's computer-use guidance suggests.
const (
	DefaultWidth  = 1280
	DefaultHeight = 800
)

// ErrNoChromium is returned when no Chromium binary is found.
var ErrNoChromium = errors.New("no chromium found: install it (Debian: apt-get install chromium) or set Options.Exec")

// ErrDied is wrapped by the error of a start-up during which the Chromium
// process exited (it crashed, was killed, or gave up), as opposed to a
// start-up the caller's context cut short.
var ErrDied = errors.New("the browser (chromium) died during start-up")

// Find returns the path of a Chromium binary on PATH.
func Find() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Options configure a Browser.
type Options struct {
	// Exec is the Chromium binary; "" means Find.
	Exec string
	// Allow is the network allowlist. With Off set, every host is allowed
	// (the evaluation's unguarded baseline only).
	Allow Allowlist
	Off   bool
	// Width and Height are the viewport in CSS pixels (zero: 1280×800).
	Width, Height int
	// Settle caps how long an action waits for the page to settle (zero: 3 s).
	Settle time.Duration
}

// Browser is one tab of a headless Chromium. Its methods must not be
// called concurrently, except Blocked.
type Browser struct {
	opts    Options
	ctx     context.Context // the tab's chromedp context
	cancel  context.CancelFunc
	engine  *Engine
	owns    bool // Close ends the engine too (Launch)
	wg      sync.WaitGroup
	mu      sync.Mutex
	blocked []computer.BlockedRequest
	allowed []string
	loading map[string]bool // frames that started loading and have not stopped
	lastReq time.Time       // when the last request was paused
}

var _ computer.Env = (*Browser)(nil)

// Engine is one headless Chromium process with a fresh profile, from which
// Open makes browsers that share nothing a page can see: each has a
// browser context of its own (Chromium's isolated profile in memory:
// cookies, storage, cache, permissions) and its own tab, disposed by the
// Browser's Close. Starting Chromium is most of a short session's cost, so
// many sessions in a row (an evaluation run) share an engine.
type Engine struct {
	opts   Options // Exec, Width and Height as Chromium was started
	root   context.Context
	cancel func()
	dir    string
}

// Launch starts Chromium with a fresh profile and opens one blank tab with
// request interception on. ctx bounds the start only; Close ends the
// browser and removes the profile.
func Launch(ctx context.Context, o Options) (*Browser, error) {
	if err := o.Allow.Validate(); err != nil {
		return nil, err
	}
	e, err := Start(ctx, o)
	if err != nil {
		return nil, err
	}
	b, err := e.browser(ctx, e.root, e.cancel, o) // the first tab: closing it ends Chromium
	if err != nil {
		e.Close()
		return nil, err
	}
	b.owns = true
	return b, nil
}

// Start starts Chromium with a fresh profile for Open. o's Exec, Width and
// Height apply to every Browser it opens (its Allow, Off and Settle are
// not used). ctx bounds the start only; Close ends Chromium and removes the
// profile.
func Start(ctx context.Context, o Options) (*Engine, error) {
	if o.Exec == "" {
		p, err := Find()
		if err != nil {
			return nil, err
		}
		o.Exec = p
	}
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = DefaultWidth, DefaultHeight
	}
	dir, err := newProfile()
	if err != nil {
		return nil, fmt.Errorf("browser: make a profile directory: %w", err)
	}
	var cmd *exec.Cmd // set while Chromium starts; its ProcessState is safe to read after cancelAlloc
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(ctx),
		chromedp.ExecPath(o.Exec),
		chromedp.ModifyCmdFunc(func(c *exec.Cmd) { cmd = c; killWithParent(c) }),
		chromedp.UserDataDir(dir),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(o.Width, o.Height),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("block-new-web-contents", true),
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process,Translate,OptimizationHints,MediaRouter"),
		chromedp.Flag("force-device-scale-factor", "1"),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("password-store", "basic"),
	)
	root, cancelRoot := chromedp.NewContext(alloc)
	e := &Engine{opts: o, root: root, dir: dir}
	var once sync.Once // chromedp's cancel funcs must run once
	e.cancel = func() { once.Do(func() { cancelRoot(); cancelAlloc() }) }
	stop := context.AfterFunc(ctx, e.cancel) // a start cut short ends the browser
	err = chromedp.Do(root)                  // the first run starts Chromium and attaches its first tab
	stop()
	if err == nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		e.Close() // waits for the process: cmd.ProcessState is final
		var state *os.ProcessState
		if cmd != nil {
			state = cmd.ProcessState
		}
		return nil, startError(ctx, o.Exec, err, state)
	}
	return e, nil
}

// startError says why a start-up failed: the caller's context, a binary
// that cannot be run, or (anything else: the process ran and exited before
// rein could use it) the browser's death, with how it died and what it
// printed, never a bare "context canceled".
func startError(ctx context.Context, exe string, err error, state *os.ProcessState) error {
	if ctx.Err() != nil {
		return fmt.Errorf("browser: start %s: %w", exe, context.Cause(ctx))
	}
	var execErr *exec.Error
	var pathErr *fs.PathError
	var exitErr *exec.ExitError
	if errors.As(err, &execErr) || errors.As(err, &pathErr) && !errors.As(err, &exitErr) {
		return fmt.Errorf("browser: cannot run %s: %w", exe, err)
	}
	how := "it exited"
	switch {
	case errors.As(err, &exitErr):
		how = exitErr.ProcessState.String() // "signal: killed", "exit status 1"
	case state != nil:
		how = state.String()
	}
	return fmt.Errorf("browser: %w (%s: %s): %s", ErrDied, exe, how, clipOutput(err.Error()))
}

// clipOutput keeps the start of an error that may carry pages of
// Chromium's output.
func clipOutput(s string) string {
	const max = 1500
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}

// Open opens a Browser in a new browser context of the engine: a fresh
// in-memory profile and tab, with o's Allow, Off and Settle (its Exec,
// Width and Height are the engine's). ctx bounds the opening only.
func (e *Engine) Open(ctx context.Context, o Options) (*Browser, error) {
	if err := o.Allow.Validate(); err != nil {
		return nil, err
	}
	tab, cancel := chromedp.NewContext(e.root, chromedp.WithNewBrowserContext())
	return e.browser(ctx, tab, cancel, o)
}

// exited reports whether the Chromium process is gone: chromedp cancels
// the engine's root context when the process exits.
func (e *Engine) exited() bool { return e.root.Err() != nil }

// Close ends Chromium, and every Browser opened from it, and removes the
// profile directory.
func (e *Engine) Close() error {
	e.cancel()
	return os.RemoveAll(e.dir)
}

// browser readies tab as a Browser under o; cancel closes the tab.
func (e *Engine) browser(ctx context.Context, tab context.Context, cancel context.CancelFunc, o Options) (*Browser, error) {
	o.Exec, o.Width, o.Height = e.opts.Exec, e.opts.Width, e.opts.Height
	if o.Settle <= 0 {
		o.Settle = 3 * time.Second
	}
	b := &Browser{opts: o, ctx: tab, engine: e, loading: map[string]bool{}}
	var once sync.Once
	b.cancel = func() { once.Do(cancel) }
	stop := context.AfterFunc(ctx, b.cancel) // an opening cut short closes the tab
	err := b.setup()
	stop()
	if err == nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		died := e.exited() // before b.cancel, which for Launch's tab ends the engine
		b.cancel()
		b.wg.Wait()
		if died && ctx.Err() == nil {
			return nil, startError(ctx, o.Exec, err, nil)
		}
		return nil, fmt.Errorf("browser: open a tab in %s: %w", o.Exec, err)
	}
	return b, nil
}

// newProfile makes a fresh, private (0700) profile directory: under
// /dev/shm where rein may write there, since Chromium writes a profile
// heavily while it starts and it is thrown away after, and on a busy disk
// that start waits on I/O; under the system's temp dir otherwise.
func newProfile() (string, error) {
	if dir, err := os.MkdirTemp("/dev/shm", "rein-chromium-"); err == nil {
		return dir, nil
	}
	return os.MkdirTemp("", "rein-chromium-")
}

func (b *Browser) setup() error {
	// The first Do starts Chromium and attaches the tab.
	if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(int64(b.opts.Width), int64(b.opts.Height))); err != nil {
		return err
	}
	if _, err := chromedp.Call(b.ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		return fmt.Errorf("focus emulation: %w", err)
	}
	// A blinking caret would make every screenshot of a focused field new.
	if _, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `document.addEventListener('DOMContentLoaded', () => { const s = document.createElement('style');` +
			` s.textContent = '*{caret-color:transparent !important}'; document.head && document.head.appendChild(s); });`,
	}); err != nil {
		return fmt.Errorf("caret style: %w", err)
	}
	if err := chromedp.Listen(b.ctx, b.frameEvent); err != nil {
		return fmt.Errorf("listen to frame events: %w", err)
	}
	paused := chromedp.Events(b.ctx, fetch.RequestPaused)
	if _, err := chromedp.Call(b.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return fmt.Errorf("request interception: %w", err)
	}
	b.wg.Go(func() {
		for ev, err := range paused {
			if err != nil {
				return // the tab is gone
			}
			b.decide(ev)
		}
	})
	return nil
}

// frameEvent tracks which frames are loading. It runs in the tab's message
// loop and must return fast.
func (b *Browser) frameEvent(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *page.EventFrameStartedLoading:
		b.loading[string(e.FrameID)] = true
	case *page.EventFrameStoppedLoading:
		delete(b.loading, string(e.FrameID))
	case *page.EventFrameDetached:
		delete(b.loading, string(e.FrameID))
	}
}

// quiet reports whether no frame is loading and no request was paused for
// a while.
func (b *Browser) quiet() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.loading) == 0 && time.Since(b.lastReq) > 200*time.Millisecond
}

// decide lets a paused request through or fails it.
func (b *Browser) decide(ev fetch.EventRequestPaused) {
	b.mu.Lock()
	b.lastReq = time.Now()
	b.mu.Unlock()
	host, ok := b.opts.Allow.Allows(ev.Request.URL)
	if b.opts.Off {
		ok = true
	}
	if ok {
		b.mu.Lock()
		b.allowed = append(b.allowed, ev.Request.URL)
		b.mu.Unlock()
		_, _ = chromedp.Call(b.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		return
	}
	b.mu.Lock()
	b.blocked = append(b.blocked, computer.BlockedRequest{URL: ev.Request.URL, Host: host,
		Navigation: ev.ResourceType == network.ResourceTypeDocument})
	b.mu.Unlock()
	_, _ = chromedp.Call(b.ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
}

// Blocked returns, and forgets, the requests refused since the last call.
func (b *Browser) Blocked() []computer.BlockedRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.blocked
	b.blocked = nil
	return out
}

// Requested returns every URL let through so far (tests, reports).
func (b *Browser) Requested() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.allowed...)
}

// Close closes the tab and its browser context; a Browser from Launch ends
// Chromium and removes its profile directory too.
func (b *Browser) Close() error {
	b.cancel()
	b.wg.Wait()
	if b.owns {
		return b.engine.Close()
	}
	return nil
}

// ProfileDir is the engine's temporary profile directory (removed when the
// engine closes).
func (b *Browser) ProfileDir() string { return b.engine.dir }

// call runs f on the tab under ctx: cancelling ctx cancels the action.
func (b *Browser) call(ctx context.Context, f func(tab context.Context) error) error {
	tab, cancel := context.WithCancelCause(b.ctx)
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	defer stop()
	err := f(tab)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// Navigate loads url and waits for the page to settle. A blocked URL is not
// an error here: the page stays as it was and Blocked reports it.
func (b *Browser) Navigate(ctx context.Context, url string) error {
	err := b.call(ctx, func(tab context.Context) error {
		_, err := chromedp.Call(tab, page.Navigate, page.NavigateParams{URL: url})
		return err
	})
	if err != nil {
		return fmt.Errorf("browser: navigate to %s: %w", url, err)
	}
	return b.settle(ctx)
}

// URL returns the address of the page shown.
func (b *Browser) URL(ctx context.Context) (string, error) {
	var u string
	err := b.call(ctx, func(tab context.Context) error {
		var err error
		u, err = chromedp.Run(tab, chromedp.Location())
		return err
	})
	return u, err
}

// Screenshot takes a PNG of the viewport.
func (b *Browser) Screenshot(ctx context.Context) (computer.Screenshot, error) {
	var png []byte
	err := b.call(ctx, func(tab context.Context) error {
		var err error
		png, err = chromedp.Run(tab, chromedp.CaptureScreenshot())
		return err
	})
	if err != nil {
		return computer.Screenshot{}, fmt.Errorf("browser: screenshot: %w", err)
	}
	return computer.Screenshot{PNG: png, Width: b.opts.Width, Height: b.opts.Height}, nil
}

// Inspect reports the element a click at (X, Y) would hit, or the focused
// element for type and key actions.
func (b *Browser) Inspect(ctx context.Context, a computer.Action) (computer.Element, error) {
	mode := "focus"
	if a.Kind == computer.Click {
		mode = "point"
	}
	expr := fmt.Sprintf("(%s)(%q, %d, %d)", inspectJS, mode, a.X, a.Y)
	var raw []byte
	err := b.call(ctx, func(tab context.Context) error {
		var err error
		raw, err = chromedp.Run(tab, chromedp.Evaluate[[]byte](expr))
		return err
	})
	if err != nil {
		return computer.Element{}, fmt.Errorf("browser: inspect: %w", err)
	}
	var el computer.Element
	if err := json.Unmarshal(raw, &el); err != nil {
		return computer.Element{}, fmt.Errorf("browser: inspect: %w", err)
	}
	return el, nil
}

var keyCodes = map[string]string{
	"Enter": kb.Enter, "Tab": kb.Tab, "Escape": kb.Escape, "Backspace": kb.Backspace,
	"Delete": kb.Delete, "Space": " ", "ArrowUp": kb.ArrowUp, "ArrowDown": kb.ArrowDown,
	"ArrowLeft": kb.ArrowLeft, "ArrowRight": kb.ArrowRight, "PageUp": kb.PageUp,
	"PageDown": kb.PageDown, "Home": kb.Home, "End": kb.End,
}

// AllowsURL reports whether the allowlist lets a page load of raw go out:
// the screen gate asks it before a click on a link (computer.Allower).
// With the allowlist off, everything is allowed.
func (b *Browser) AllowsURL(raw string) bool {
	if b.opts.Off {
		return true
	}
	_, ok := b.opts.Allow.Allows(raw)
	return ok
}

var _ computer.Allower = (*Browser)(nil)

// Perform does one action and waits for the page to settle.
func (b *Browser) Perform(ctx context.Context, a computer.Action) error {
	err := b.call(ctx, func(tab context.Context) error {
		switch a.Kind {
		case computer.Click:
			x, y := float64(a.X), float64(a.Y)
			return chromedp.Do(tab, chromedp.MouseEvent(chromedp.MouseMoved, x, y), chromedp.MouseClickXY(x, y))
		case computer.Type:
			_, err := chromedp.Call(tab, input.InsertText, input.InsertTextParams{Text: a.Text})
			return err
		case computer.Scroll:
			return chromedp.Do(tab, chromedp.MouseEvent(chromedp.MouseWheel, float64(b.opts.Width/2), float64(b.opts.Height/2),
				func(p *input.DispatchMouseEventParams) { p.DeltaY = float64(a.DY) }))
		case computer.Key:
			k, ok := keyCodes[a.Name]
			if !ok {
				return fmt.Errorf("unknown key %q", a.Name)
			}
			return chromedp.Do(tab, chromedp.KeyEvent(k))
		case computer.Wait:
			return sleep(tab, 500*time.Millisecond)
		}
		return fmt.Errorf("action %q is not one the browser performs", a.Kind)
	})
	if err != nil {
		return fmt.Errorf("browser: %s: %w", a, err)
	}
	return b.settle(ctx)
}

// settle waits, up to Options.Settle, for the page to be quiet: no frame
// loading, no request for 200 ms, the document complete, and two frames
// painted after that.
func (b *Browser) settle(ctx context.Context) error {
	return b.call(ctx, func(tab context.Context) error {
		deadline := time.Now().Add(b.opts.Settle)
		if err := sleep(tab, 100*time.Millisecond); err != nil {
			return err
		}
		for time.Now().Before(deadline) {
			if b.quiet() {
				state, err := chromedp.Run(tab, chromedp.Evaluate[string]("document.readyState"))
				if err == nil && state == "complete" && b.quiet() {
					break
				}
			}
			if err := sleep(tab, 50*time.Millisecond); err != nil {
				return err
			}
		}
		_, _ = chromedp.Run(tab, chromedp.Evaluate[bool](
			`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, chromedp.EvalAwaitPromise))
		return nil
	})
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
