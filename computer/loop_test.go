package computer_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/computer"
)

// fakeEnv is a screen whose picture is a colour that actions change: a
// click inside a "button" rectangle moves to the next page; elsewhere
// nothing happens. Elements are given by the test.
type fakeEnv struct {
	mu       sync.Mutex
	page     int
	button   image.Rectangle
	elements map[computer.Kind]computer.Element
	blocked  []computer.BlockedRequest
	log      *[]string // shared with the audit log to check ordering
	block    bool      // Perform waits for ctx
	started  chan struct{}
}

func (f *fakeEnv) Screenshot(context.Context) (computer.Screenshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	c := color.RGBA{uint8(40 * f.page), 100, 200, 255}
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return computer.Screenshot{}, err
	}
	return computer.Screenshot{PNG: buf.Bytes(), Width: 64, Height: 48}, nil
}

func (f *fakeEnv) Inspect(_ context.Context, a computer.Action) (computer.Element, error) {
	if el, ok := f.elements[a.Kind]; ok {
		return el, nil
	}
	return computer.Element{Found: true, Tag: "div"}, nil
}

func (f *fakeEnv) Perform(ctx context.Context, a computer.Action) error {
	*f.log = append(*f.log, "perform "+string(a.Kind))
	if f.block {
		close(f.started)
		<-ctx.Done()
		return ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if a.Kind == computer.Click && image.Pt(a.X, a.Y).In(f.button) {
		f.page++
	}
	if a.Kind == computer.Type {
		f.page++
	}
	return nil
}

func (f *fakeEnv) Blocked() []computer.BlockedRequest {
	b := f.blocked
	f.blocked = nil
	return b
}

// logWriter is an audit log that also notes record types in order.
type logWriter struct {
	w   *audit.Writer
	buf bytes.Buffer
	log *[]string
}

func newLog(t *testing.T, order *[]string) *logWriter {
	l := &logWriter{log: order}
	l.w = audit.NewWriter(&l.buf, "s1")
	return l
}

func (l *logWriter) Write(r audit.Record) error {
	*l.log = append(*l.log, string(r.Type)+" "+r.Tool+" "+r.Decision.String())
	return l.w.Write(r)
}

func script(t *testing.T, js string) *computer.Scripted {
	t.Helper()
	s, err := computer.ParseScript([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return computer.NewScripted(s)
}

func run(t *testing.T, env *fakeEnv, js string, cfg computer.Config) (computer.Result, []string, *logWriter) {
	t.Helper()
	var order []string
	env.log = &order
	l := newLog(t, &order)
	cfg.Model, cfg.Env, cfg.Audit = script(t, js), env, l
	loop, err := computer.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return loop.Run(t.Context(), "task"), order, l
}

func TestNoEffectAndRecovery(t *testing.T) {
	env := &fakeEnv{button: image.Rect(10, 10, 20, 20)}
	res, _, l := run(t, env, `{"steps":[
		{"action":"click","x":40,"y":40},
		{"action":"click","x":41,"y":40},
		{"action":"click","x":15,"y":15},
		{"action":"done","summary":"ok"}]}`, computer.Config{})
	if res.Stop != agent.StopDone || res.Summary != "ok" {
		t.Fatalf("stop %s %q, err %v", res.Stop, res.Summary, res.Err)
	}
	if res.NoEffect != 2 || res.Recoveries != 1 {
		t.Errorf("no effect %d, recoveries %d; want 2, 1", res.NoEffect, res.Recoveries)
	}
	if got := res.History[0].Observation; got != computer.NoEffect {
		t.Errorf("model told %q after a miss, want %q", got, computer.NoEffect)
	}
	if got := res.History[2].Observation; got != computer.ScreenMove {
		t.Errorf("model told %q after a hit", got)
	}
	if _, err := audit.Verify(bytes.NewReader(l.buf.Bytes())); err != nil {
		t.Errorf("audit log does not verify: %v", err)
	}
}

func TestIrreversibleNeedsYes(t *testing.T) {
	pay := computer.Element{Found: true, Tag: "button", Texts: []string{"Pay 129 kr"}}
	const js = `{"steps":[{"action":"click","x":15,"y":15},{"action":"done","summary":"paid"}]}`
	for _, c := range []struct {
		name     string
		approver approve.Approver
		want     agent.StopReason
		performs bool
	}{
		{"yes", approve.Fixed(true), agent.StopDone, true},
		{"no", approve.Fixed(false), computer.StopDenied, false},
		{"no approver means no", nil, computer.StopDenied, false},
		{"approver error means no", approve.Func(func(context.Context, approve.Request) (bool, error) {
			return true, errors.New("tty gone")
		}), computer.StopDenied, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := &fakeEnv{button: image.Rect(10, 10, 20, 20), elements: map[computer.Kind]computer.Element{computer.Click: pay}}
			rec := &approve.Recorder{Next: c.approver}
			if c.approver == nil {
				rec.Next = approve.Deny{}
			}
			res, order, _ := run(t, env, js, computer.Config{Approver: rec})
			if res.Stop != c.want {
				t.Fatalf("stop %s, want %s (%v)", res.Stop, c.want, res.Err)
			}
			if len(rec.Requests()) != 1 || res.Approvals != 1 {
				t.Fatalf("asked %d times", len(rec.Requests()))
			}
			if !strings.Contains(rec.Requests()[0].Reason, `"pay"`) {
				t.Errorf("reason %q does not say why", rec.Requests()[0].Reason)
			}
			performed := strings.Contains(strings.Join(order, "\n"), "perform click")
			if performed != c.performs {
				t.Fatalf("performed %v, want %v: %v", performed, c.performs, order)
			}
			if !c.performs {
				if res.Denied == nil || res.Denied.Kind != computer.Click {
					t.Errorf("the refused action is not reported: %+v", res.Denied)
				}
				return
			}
			// The intent record is written before the action.
			i := indexOf(order, "intent click ")
			j := indexOf(order, "perform click")
			if i < 0 || j < 0 || i > j {
				t.Errorf("intent at %d, perform at %d: %v", i, j, order)
			}
		})
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func TestPasswordRefusedUnlessAllowed(t *testing.T) {
	pw := computer.Element{Found: true, Tag: "input", InputType: "password", Editable: true}
	const js = `{"steps":[{"action":"type","text":"hunter2"},{"action":"done","summary":"x"}]}`
	for _, allow := range []bool{false, true} {
		env := &fakeEnv{elements: map[computer.Kind]computer.Element{computer.Type: pw}}
		res, order, _ := run(t, env, js, computer.Config{Policy: computer.Policy{AllowPasswords: allow}})
		typed := indexOf(order, "perform type") >= 0
		if typed != allow {
			t.Errorf("allow passwords %v: typed %v", allow, typed)
		}
		if !allow && res.Refusals[computer.GatePassword] != 1 {
			t.Errorf("refusals %v", res.Refusals)
		}
	}
}

func TestValidationAndSteps(t *testing.T) {
	env := &fakeEnv{}
	res, order, _ := run(t, env, `{"steps":[{"action":"click","x":500,"y":5},{"action":"key","name":"Enter"},{"action":"wait"}]}`,
		computer.Config{Limits: budget.Limits{MaxSteps: 2}})
	if res.Stop != agent.StopMaxSteps {
		t.Fatalf("stop %s, want max_steps", res.Stop)
	}
	if res.Refusals["validation"] != 1 || indexOf(order, "perform click") >= 0 {
		t.Errorf("an off-screen click was not refused: %v %v", res.Refusals, order)
	}
	if !strings.Contains(res.History[0].Observation, "outside") {
		t.Errorf("model told %q", res.History[0].Observation)
	}
}

func TestBlockedRequestsReachModelAndLog(t *testing.T) {
	env := &fakeEnv{blocked: []computer.BlockedRequest{{URL: "http://evil.test/x", Host: "evil.test", Navigation: true}}}
	res, order, _ := run(t, env, `{"steps":[{"action":"wait"},{"action":"click","x":1,"y":1},{"action":"done"}]}`, computer.Config{})
	if len(res.Blocked) != 1 || res.Refusals[computer.GateNetwork] != 1 {
		t.Fatalf("blocked %v refusals %v", res.Blocked, res.Refusals)
	}
	if indexOf(order, "verdict browser.request deny") < 0 {
		t.Errorf("no deny record for the blocked request: %v", order)
	}
}

func TestAbortStopsActionInFlight(t *testing.T) {
	env := &fakeEnv{block: true, started: make(chan struct{})}
	var order []string
	env.log = &order
	l := newLog(t, &order)
	loop, err := computer.New(computer.Config{Model: script(t, `{"steps":[{"action":"click","x":1,"y":1}]}`), Env: env, Audit: l})
	if err != nil {
		t.Fatal(err)
	}
	ctx, abort := agent.WithAbort(t.Context())
	go func() {
		<-env.started
		abort("test")
	}()
	res := loop.Run(ctx, "task")
	if res.Stop != agent.StopAborted || !errors.Is(res.Err, agent.ErrAborted) {
		t.Fatalf("stop %s err %v", res.Stop, res.Err)
	}
	if indexOf(order, "abort click ") < 0 {
		t.Errorf("no abort record naming the click in flight: %v", order)
	}
}

func TestModelErrorStops(t *testing.T) {
	loop, err := computer.New(computer.Config{Model: failing{}, Env: &fakeEnv{}})
	if err != nil {
		t.Fatal(err)
	}
	res := loop.Run(t.Context(), "task")
	if res.Stop != agent.StopError {
		t.Fatalf("stop %s", res.Stop)
	}
}

type failing struct{}

func (failing) Decide(context.Context, *computer.Request) (*computer.Response, error) {
	return nil, errors.New("overloaded")
}

func TestRequestKeepsSystemApart(t *testing.T) {
	var seen []*computer.Request
	m := modelFunc(func(_ context.Context, r *computer.Request) (*computer.Response, error) {
		seen = append(seen, r)
		return &computer.Response{Action: computer.Action{Kind: computer.Done}}, nil
	})
	loop, err := computer.New(computer.Config{Model: m, Env: &fakeEnv{}})
	if err != nil {
		t.Fatal(err)
	}
	loop.Run(t.Context(), "Buy the mug.")
	if len(seen) != 1 || seen[0].System != computer.System || seen[0].Task != "Buy the mug." || len(seen[0].Screen.PNG) == 0 {
		t.Fatalf("request %+v", seen)
	}
	if !strings.Contains(computer.System, "untrusted data") {
		t.Error("the system instructions do not say the screen is untrusted")
	}
}

type modelFunc func(context.Context, *computer.Request) (*computer.Response, error)

func (f modelFunc) Decide(ctx context.Context, r *computer.Request) (*computer.Response, error) {
	return f(ctx, r)
}
