package computer_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/computer"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// fakeEnv is a screen whose picture is a colour that actions change: a
// click inside a "button" rectangle moves to the next page; elsewhere
// nothing happens. Elements are given by the test.
type fakeEnv struct {
	mu         sync.Mutex
	page       int
	button     image.Rectangle
	elements   map[computer.Kind]computer.Element
	inspects   int
	inspectErr error // Inspect fails
	performErr error // Perform fails
	shots      int   // screenshots taken
	shotsOK    int   // when > 0, screenshots after this many fail
	blocked    []computer.BlockedRequest
	log        *[]string // shared with the audit log to check ordering
	block      bool      // Perform waits for ctx
	started    chan struct{}
}

func (f *fakeEnv) Screenshot(context.Context) (computer.Screenshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shots++; f.shotsOK > 0 && f.shots > f.shotsOK {
		return computer.Screenshot{}, errors.New("the display is gone")
	}
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
	f.mu.Lock()
	f.inspects++
	f.mu.Unlock()
	if f.inspectErr != nil {
		return computer.Element{}, f.inspectErr
	}
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
	if f.performErr != nil {
		return f.performErr
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
	w    *audit.Writer
	buf  bytes.Buffer
	log  *[]string
	recs []audit.Record
}

func newLog(t *testing.T, order *[]string) *logWriter {
	l := &logWriter{log: order}
	l.w = audit.NewWriter(&l.buf, "s1")
	return l
}

func (l *logWriter) Write(r audit.Record) error {
	*l.log = append(*l.log, string(r.Type)+" "+r.Tool+" "+r.Decision.String())
	l.recs = append(l.recs, r)
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
	s, err := computer.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s.Run(t.Context(), "task"), order, l
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func TestNoEffectAndRecovery(t *testing.T) {
	env := &fakeEnv{button: image.Rect(10, 10, 20, 20)}
	res, _, l := run(t, env, `{"steps":[
		{"action":"click","x":40,"y":40},
		{"action":"click","x":41,"y":40},
		{"action":"click","x":15,"y":15},
		{"action":"done","summary":"ok"}]}`, computer.Config{})
	if res.Stop != agent.StopDone || res.Answer != "ok" {
		t.Fatalf("stop %s %q, err %v", res.Stop, res.Answer, res.Err)
	}
	if res.NoEffect != 2 || res.Recoveries != 1 || res.Actions != 3 {
		t.Errorf("no effect %d, recoveries %d, actions %d; want 2, 1, 3", res.NoEffect, res.Recoveries, res.Actions)
	}
	turns := computer.Turns(res.Messages)
	if len(turns) != 3 {
		t.Fatalf("turns %+v", turns)
	}
	if got := turns[0].Observation; got != computer.NoEffect {
		t.Errorf("model told %q after a miss, want %q", got, computer.NoEffect)
	}
	if got := turns[2].Observation; got != computer.ScreenMove {
		t.Errorf("model told %q after a hit", got)
	}
	// Each result carries the screenshot taken after the action.
	for _, m := range res.Messages[1:] {
		for _, b := range m.Blocks {
			if b.Kind == model.KindToolResult && (len(b.Result.Images) != 1 || b.Result.Images[0].MediaType != "image/png") {
				t.Errorf("result %+v carries no screenshot", b.Result)
			}
		}
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
		performs bool
	}{
		{"yes", approve.Fixed(true), true},
		{"no", approve.Fixed(false), false},
		{"no approver means no", nil, false},
		{"approver error means no", approve.Func(func(context.Context, approve.Request) (bool, error) {
			return true, errors.New("tty gone")
		}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := &fakeEnv{button: image.Rect(10, 10, 20, 20), elements: map[computer.Kind]computer.Element{computer.Click: pay}}
			rec := &approve.Recorder{Next: c.approver}
			if c.approver == nil {
				rec.Next = approve.Deny{}
			}
			res, order, l := run(t, env, js, computer.Config{Approver: rec})
			// A no is an ordinary refusal: the model is told to end the
			// task, and it does; there is no stop reason of its own.
			if res.Stop != agent.StopDone {
				t.Fatalf("stop %s, want done (%v)", res.Stop, res.Err)
			}
			if len(rec.Requests()) != 1 || res.Approvals != 1 {
				t.Fatalf("asked %d times (approvals %d)", len(rec.Requests()), res.Approvals)
			}
			if r := rec.Requests()[0]; !strings.Contains(r.Reason, `"pay"`) || r.Gate != computer.GateScreen {
				t.Errorf("request %+v does not say why", r)
			}
			if env.inspects != 1 {
				t.Errorf("the element was inspected %d times, want once", env.inspects)
			}
			performed := indexOf(order, "perform click") >= 0
			if performed != c.performs {
				t.Fatalf("performed %v, want %v: %v", performed, c.performs, order)
			}
			if !c.performs {
				turns := computer.Turns(res.Messages)
				if !res.Declined() || res.Refusals[gate.NameApproval] != 1 || len(turns) != 1 ||
					!turns[0].Refused || !strings.Contains(turns[0].Observation, computer.Declined) {
					t.Errorf("the refusal is not reported as a declined approval: %v %+v", res.Refusals, turns)
				}
				return
			}
			if res.Declined() {
				t.Error("a yes reported as declined")
			}
			// The intent record is written before the action, as irreversible, with a key.
			i := indexOf(order, "intent click ")
			j := indexOf(order, "perform click")
			if i < 0 || j < 0 || i > j {
				t.Fatalf("intent at %d, perform at %d: %v", i, j, order)
			}
			if in := l.recs[i]; !in.Effect.Is(tool.Irreversible) || in.Key == "" {
				t.Errorf("intent %+v", in)
			}
		})
	}
}

// The per-run limit sees computer actions: a second irreversible click is
// refused by the limit gate however willing the human; reversible clicks
// are not counted.
func TestIrreversibleClicksOverTheCap(t *testing.T) {
	pay := computer.Element{Found: true, Tag: "button", Texts: []string{"Pay 129 kr"}}
	env := &fakeEnv{button: image.Rect(10, 10, 20, 20), elements: map[computer.Kind]computer.Element{computer.Click: pay}}
	rec := &approve.Recorder{Next: approve.Fixed(true)}
	res, order, _ := run(t, env, `{"steps":[
		{"action":"click","x":15,"y":15},
		{"action":"click","x":16,"y":15},
		{"action":"done","summary":"paid twice?"}]}`, computer.Config{Approver: rec})
	if res.Stop != agent.StopDone {
		t.Fatalf("stop %s (%v)", res.Stop, res.Err)
	}
	if n := strings.Count(strings.Join(order, "\n"), "perform click"); n != 1 {
		t.Errorf("%d payments performed, want 1: %v", n, order)
	}
	if res.Refusals[gate.NameLimit] != 1 || len(rec.Requests()) != 1 {
		t.Errorf("refusals %v, asked %d times; want one limit refusal and one question", res.Refusals, len(rec.Requests()))
	}
	// With a cap of two, both run.
	env = &fakeEnv{button: image.Rect(10, 10, 20, 20), elements: map[computer.Kind]computer.Element{computer.Click: pay}}
	res, order, _ = run(t, env, `{"steps":[{"action":"click","x":15,"y":15},{"action":"click","x":16,"y":15}]}`,
		computer.Config{Approver: approve.Fixed(true), Caps: map[string]int{"click": 2}})
	if n := strings.Count(strings.Join(order, "\n"), "perform click"); n != 2 || res.Refusals[gate.NameLimit] != 0 {
		t.Errorf("cap 2: %d performed, refusals %v", n, res.Refusals)
	}
}

// Extra gates (the data-flow gate, say) see every action call.
func TestExtraGatesSeeActions(t *testing.T) {
	seen := &recordGate{}
	env := &fakeEnv{}
	res, _, _ := run(t, env, `{"steps":[{"action":"click","x":1,"y":1},{"action":"type","text":"hi"},{"action":"done"}]}`,
		computer.Config{Gates: []gate.Gate{seen}})
	if res.Stop != agent.StopDone || strings.Join(seen.names, ",") != "click,type" {
		t.Fatalf("stop %s; the extra gate saw %v", res.Stop, seen.names)
	}
}

type recordGate struct{ names []string }

func (*recordGate) Name() string { return "extra" }
func (g *recordGate) Check(_ context.Context, c *gate.Call) gate.Verdict {
	g.names = append(g.names, c.Name)
	return gate.Verdict{Decision: gate.Allow}
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
		if !allow && (res.Refusals[computer.GateScreen] != 1 || indexOf(order, "verdict type deny") < 0) {
			t.Errorf("refusals %v, log %v", res.Refusals, order)
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
	if res.Refusals[gate.NameValidation] != 1 || indexOf(order, "perform click") >= 0 {
		t.Errorf("an off-screen click was not refused: %v %v", res.Refusals, order)
	}
	if turns := computer.Turns(res.Messages); len(turns) == 0 || !strings.Contains(turns[0].Observation, "outside") {
		t.Errorf("model told %+v", turns)
	}
}

func TestBudgetCapsActions(t *testing.T) {
	env := &fakeEnv{}
	res, order, _ := run(t, env, `{"steps":[{"action":"wait"},{"action":"wait"},{"action":"done"}]}`,
		computer.Config{Limits: budget.Limits{MaxToolCalls: 1}})
	if res.Stop != agent.StopBudget || strings.Count(strings.Join(order, "\n"), "perform wait") != 1 {
		t.Fatalf("stop %s, log %v", res.Stop, order)
	}
}

func TestBlockedRequestsReachModelAndLog(t *testing.T) {
	env := &fakeEnv{blocked: []computer.BlockedRequest{{URL: "http://evil.test/x", Host: "evil.test", Navigation: true}}}
	var first *model.Request
	m := script(t, `{"steps":[{"action":"wait"},{"action":"click","x":1,"y":1},{"action":"done"}]}`)
	spy := modelFunc(func(ctx context.Context, r *model.Request) (*model.Response, error) {
		if first == nil {
			first = r
		}
		return m.Generate(ctx, r)
	})
	var order []string
	env.log = &order
	s, err := computer.New(computer.Config{Model: spy, Env: env, Audit: newLog(t, &order)})
	if err != nil {
		t.Fatal(err)
	}
	res := s.Run(t.Context(), "task")
	if len(res.Blocked) != 1 || res.Refusals[computer.GateNetwork] != 1 {
		t.Fatalf("blocked %v refusals %v", res.Blocked, res.Refusals)
	}
	if indexOf(order, "verdict browser.request deny") < 0 {
		t.Errorf("no deny record for the blocked request: %v", order)
	}
	if !strings.Contains(model.JoinText(first.Messages[0].Blocks), "rein blocked a page load from evil.test") {
		t.Errorf("the model was not told: %+v", first.Messages[0].Blocks)
	}
}

func TestAbortStopsActionInFlight(t *testing.T) {
	env := &fakeEnv{block: true, started: make(chan struct{})}
	var order []string
	env.log = &order
	l := newLog(t, &order)
	s, err := computer.New(computer.Config{Model: script(t, `{"steps":[{"action":"click","x":1,"y":1}]}`), Env: env, Audit: l})
	if err != nil {
		t.Fatal(err)
	}
	ctx, abort := agent.WithAbort(t.Context())
	go func() {
		<-env.started
		abort("test")
	}()
	res := s.Run(ctx, "task")
	if res.Stop != agent.StopAborted || !errors.Is(res.Err, agent.ErrAborted) {
		t.Fatalf("stop %s err %v", res.Stop, res.Err)
	}
	if indexOf(order, "abort click ") < 0 {
		t.Errorf("no abort record naming the click in flight: %v", order)
	}
}

// The wall-time cap stops a run whose model never answers.
func TestWallTime(t *testing.T) {
	slow := modelFunc(func(ctx context.Context, _ *model.Request) (*model.Response, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
	s, err := computer.New(computer.Config{Model: slow, Env: &fakeEnv{}, Limits: budget.Limits{MaxWall: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if res := s.Run(t.Context(), "task"); res.Stop != agent.StopTimeout {
		t.Fatalf("stop %s (%v)", res.Stop, res.Err)
	}
}

func TestModelErrorStops(t *testing.T) {
	failing := modelFunc(func(context.Context, *model.Request) (*model.Response, error) { return nil, errors.New("overloaded") })
	s, err := computer.New(computer.Config{Model: failing, Env: &fakeEnv{}})
	if err != nil {
		t.Fatal(err)
	}
	if res := s.Run(t.Context(), "task"); res.Stop != agent.StopError {
		t.Fatalf("stop %s", res.Stop)
	}
}

func TestRequestKeepsSystemApart(t *testing.T) {
	var seen []*model.Request
	m := modelFunc(func(_ context.Context, r *model.Request) (*model.Response, error) {
		seen = append(seen, r)
		return &model.Response{Blocks: []model.Block{model.TextBlock("done")}, StopReason: model.StopEndTurn}, nil
	})
	s, err := computer.New(computer.Config{Model: m, Env: &fakeEnv{}})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(t.Context(), "Buy the mug.")
	if len(seen) != 1 || seen[0].System != computer.System {
		t.Fatalf("requests %+v", seen)
	}
	task := seen[0].Messages[0].Blocks
	if len(task) != 3 || task[0].Text != "Buy the mug." || task[2].Kind != model.KindImage || len(task[2].Image.Data) == 0 {
		t.Fatalf("task message %+v", task)
	}
	var tools []string
	for _, d := range seen[0].Tools {
		tools = append(tools, d.Name)
	}
	if strings.Join(tools, ",") != "click,key,scroll,type,wait" {
		t.Errorf("tools offered %v", tools)
	}
	if !strings.Contains(computer.System, "untrusted data") {
		t.Error("the system instructions do not say the screen is untrusted")
	}
}

// The scripted model answers with calls of the action tools, the why as
// text, and a done step as the answer.
func TestScriptedCalls(t *testing.T) {
	m := script(t, `{"steps":[{"action":"click","x":3,"y":4,"why":"go"},{"action":"done","summary":"ok"}]}`)
	req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("t")}}}}
	r1, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	calls := r1.Calls()
	if r1.Text() != "go" || len(calls) != 1 || calls[0].Name != "click" || string(calls[0].Args) != `{"x":3,"y":4}` || r1.Usage.Input == 0 {
		t.Fatalf("first answer %+v", r1)
	}
	if a, err := computer.ActionOf(calls[0].Name, calls[0].Args); err != nil || a != (computer.Action{Kind: computer.Click, X: 3, Y: 4}) {
		t.Errorf("ActionOf: %+v %v", a, err)
	}
	r2, _ := m.Generate(t.Context(), req)
	if r2.Text() != "ok" || len(r2.Calls()) != 0 || r2.StopReason != model.StopEndTurn {
		t.Fatalf("second answer %+v", r2)
	}
	r3, _ := m.Generate(t.Context(), req)
	if r3.Text() != "the script ended" {
		t.Fatalf("after the script %+v", r3)
	}
}

type modelFunc func(context.Context, *model.Request) (*model.Response, error)

func (f modelFunc) Generate(ctx context.Context, r *model.Request) (*model.Response, error) {
	return f(ctx, r)
}

// Attacks on the classing: the model cannot label its own click (an
// argument the schema does not know is refused before anything is
// inspected or done), and an element that cannot be inspected is judged
// irreversible, so a human is asked (fail closed).
func TestModelCannotClassItsClick(t *testing.T) {
	rec := &approve.Recorder{Next: approve.Fixed(false)}
	// A hand-made call with an effect label of its own.
	labelled := modelFunc(func(_ context.Context, r *model.Request) (*model.Response, error) {
		if len(r.Messages) > 1 {
			return &model.Response{Blocks: []model.Block{model.TextBlock("ok")}, StopReason: model.StopEndTurn}, nil
		}
		return &model.Response{Blocks: []model.Block{model.CallBlock(model.ToolCall{ID: "c1", Name: "click",
			Args: []byte(`{"x":1,"y":1,"effect":"read-only"}`)})}, StopReason: model.StopToolUse}, nil
	})
	var order []string
	env := &fakeEnv{log: &order}
	s, err := computer.New(computer.Config{Model: labelled, Env: env, Approver: rec})
	if err != nil {
		t.Fatal(err)
	}
	res := s.Run(t.Context(), "task")
	if res.Refusals[gate.NameValidation] != 1 || env.inspects != 0 || indexOf(order, "perform click") >= 0 {
		t.Errorf("a labelled click: refusals %v, inspected %d times, log %v", res.Refusals, env.inspects, order)
	}

	env = &fakeEnv{inspectErr: errors.New("cross-origin frame")}
	res, order, _ = run(t, env, `{"steps":[{"action":"click","x":1,"y":1},{"action":"done"}]}`, computer.Config{Approver: rec})
	if !res.Declined() || indexOf(order, "perform click") >= 0 || len(rec.Requests()) != 1 {
		t.Errorf("an element that cannot be inspected: refusals %v, asked %d, log %v", res.Refusals, len(rec.Requests()), order)
	}
	// Legitimate use: the same click on an element that can be inspected
	// runs unasked, classed reversible.
	env = &fakeEnv{}
	res, order, l := run(t, env, `{"steps":[{"action":"click","x":1,"y":1},{"action":"done"}]}`, computer.Config{Approver: rec})
	if i := indexOf(order, "intent click "); res.Approvals != 0 || i < 0 || !l.recs[i].Effect.Is(tool.Reversible) {
		t.Errorf("a plain click: approvals %d, log %v", res.Approvals, order)
	}
}

// A failed action is the model's to handle (an error result with the
// screenshot); a screenshot that cannot be taken stops the run.
func TestActionFailureAndLostScreen(t *testing.T) {
	env := &fakeEnv{performErr: errors.New("element detached")}
	res, _, _ := run(t, env, `{"steps":[{"action":"click","x":1,"y":1},{"action":"done","summary":"gave up"}]}`, computer.Config{})
	last := res.Messages[2].Blocks[0].Result
	if res.Stop != agent.StopDone || !last.IsError || !strings.Contains(last.Content, "the action failed: element detached") || len(last.Images) != 1 {
		t.Errorf("stop %s, result %+v", res.Stop, last)
	}
	env = &fakeEnv{shotsOK: 1}
	res, _, _ = run(t, env, `{"steps":[{"action":"wait"},{"action":"done"}]}`, computer.Config{})
	if res.Stop != agent.StopError || !strings.Contains(res.Err.Error(), "the display is gone") {
		t.Errorf("stop %s (%v), want error", res.Stop, res.Err)
	}
}

// allowEnv is a fakeEnv with an allowlist of one host.
type allowEnv struct {
	*fakeEnv
	host string
}

func (e allowEnv) AllowsURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Host == e.host
}

// A click on a link off the Env's allowlist is refused by the screen gate
// before the click; links on it, links that are not http(s), and an Env
// without an allowlist are not judged; the check holds with the action
// policy off (it is the allowlist's guard).
func TestOffsiteLinkRefused(t *testing.T) {
	const js = `{"steps":[{"action":"click","x":1,"y":1},{"action":"done"}]}`
	for _, c := range []struct {
		name    string
		href    string
		allower bool
		off     bool
		refused bool
	}{
		{"off the allowlist", "http://evil.test/offers", true, false, true},
		{"off the allowlist, policy off", "https://evil.test/", true, true, true},
		{"on the allowlist", "http://shop.test/cart", true, false, false},
		{"a script link", "javascript:void(0)", true, false, false},
		{"no allowlist", "http://evil.test/offers", false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var order []string
			fe := &fakeEnv{log: &order, elements: map[computer.Kind]computer.Element{
				computer.Click: {Found: true, Tag: "a", Texts: []string{"Partner offers"}, Href: c.href}}}
			var env computer.Env = fe
			if c.allower {
				env = allowEnv{fe, "shop.test"}
			}
			s, err := computer.New(computer.Config{Model: script(t, js), Env: env, Audit: newLog(t, &order),
				Policy: computer.Policy{Off: c.off}})
			if err != nil {
				t.Fatal(err)
			}
			res := s.Run(t.Context(), "task")
			performed := indexOf(order, "perform click") >= 0
			if performed == c.refused || (res.Refusals[computer.GateScreen] == 1) != c.refused {
				t.Fatalf("performed %v, refusals %v", performed, res.Refusals)
			}
			if c.refused {
				turns := computer.Turns(res.Messages)
				if !strings.Contains(turns[0].Observation, "evil.test") || !strings.Contains(turns[0].Observation, "off limits") {
					t.Errorf("model told %q", turns[0].Observation)
				}
			}
		})
	}
}

// Two runs of one session: each reports its own counts.
func TestRunsCountApart(t *testing.T) {
	var order []string
	env := &fakeEnv{log: &order}
	s, err := computer.New(computer.Config{Env: env,
		Model: script(t, `{"steps":[{"action":"click","x":1,"y":1},{"action":"done"},{"action":"wait"},{"action":"done"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	first := s.Run(t.Context(), "one")
	second := s.Run(t.Context(), "two")
	if first.Actions != 1 || first.NoEffect != 1 || second.Actions != 1 || second.NoEffect != 0 {
		t.Errorf("first %+v, second %+v", first.Stats, second.Stats)
	}
}
