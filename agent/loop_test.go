package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/scripted"
	"github.com/reinhq/rein/tool"
)

// probe is a tool that counts its runs and does what it is told.
type probe struct {
	name   string
	effect tool.Effect
	mu     sync.Mutex
	runs   int
	run    func(ctx context.Context) (string, error)
}

func (p *probe) Spec() tool.Spec {
	return tool.Spec{Name: p.name, Description: "test tool", Schema: json.RawMessage(`{"type":"object"}`), Effect: p.effect}
}

func (p *probe) Run(ctx context.Context, _ json.RawMessage) (string, error) {
	p.mu.Lock()
	p.runs++
	p.mu.Unlock()
	if p.run != nil {
		return p.run(ctx)
	}
	return "ok", nil
}

func (p *probe) Runs() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs
}

// memLog is an audit log in memory that can be told to fail.
type memLog struct {
	mu      sync.Mutex
	recs    []audit.Record
	failOn  audit.Type
	failErr error
}

func (l *memLog) Write(r audit.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failOn != "" && r.Type == l.failOn {
		return l.failErr
	}
	l.recs = append(l.recs, r)
	return nil
}

func (l *memLog) types() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ts []string
	for _, r := range l.recs {
		ts = append(ts, string(r.Type))
	}
	return ts
}

func script(t *testing.T, js string) *scripted.Model {
	t.Helper()
	s, err := scripted.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return scripted.New("scripted:test", s)
}

type fixture struct {
	model    model.Model
	tools    []tool.Tool
	allowed  []string
	approver approve.Approver
	limits   budget.Limits
	log      *memLog
	snaps    agent.Snapshotter
	session  string
	ledger   agent.Ledger
}

func (f fixture) loop(t *testing.T) *agent.Loop {
	t.Helper()
	reg, err := tool.NewRegistry(f.tools...)
	if err != nil {
		t.Fatal(err)
	}
	allowed := f.allowed
	if allowed == nil {
		allowed = reg.Names()
	}
	var log agent.AuditLog
	if f.log != nil {
		log = f.log
	}
	l, err := agent.New(agent.Config{
		Model:     f.model,
		Tools:     reg,
		Gates:     gate.NewPipeline(f.approver, gate.NewAvailability(allowed), gate.Validation{}, gate.Confirm{}),
		Limits:    f.limits,
		Audit:     log,
		Snapshots: f.snaps,
		Session:   f.session,
		Ledger:    f.ledger,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

const twoCalls = `{"turns":[
 {"text":"a","calls":[{"tool":"probe"}]},
 {"text":"b","calls":[{"tool":"probe"},{"tool":"probe"}]},
 {"text":"the end"}]}`

func TestStopReasons(t *testing.T) {
	t.Parallel()
	never := `{"turns":[{"text":"again","calls":[{"tool":"probe"}]},{"text":"again","calls":[{"tool":"probe"}]},{"text":"again","calls":[{"tool":"probe"}]},{"text":"again","calls":[{"tool":"probe"}]}]}`
	cases := []struct {
		name      string
		script    string
		limits    budget.Limits
		ctx       func(t *testing.T) context.Context
		model     model.Model
		wantStop  agent.StopReason
		wantSteps int
		wantRuns  int
		wantErr   error
	}{
		{name: "done", script: twoCalls, wantStop: agent.StopDone, wantSteps: 3, wantRuns: 3},
		{name: "max_steps", script: never, limits: budget.Limits{MaxSteps: 2}, wantStop: agent.StopMaxSteps, wantSteps: 2, wantRuns: 2, wantErr: budget.ErrExceeded},
		{name: "tokens", script: `{"turns":[{"text":"x","calls":[{"tool":"probe"}],"usage":{"input":60,"output":50}}]}`,
			limits: budget.Limits{MaxTokens: 100}, wantStop: agent.StopBudget, wantSteps: 1, wantRuns: 0, wantErr: budget.ErrExceeded},
		{name: "tool_calls", script: twoCalls, limits: budget.Limits{MaxToolCalls: 2}, wantStop: agent.StopBudget, wantSteps: 2, wantRuns: 2, wantErr: budget.ErrExceeded},
		{name: "aborted", script: twoCalls, ctx: func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			return ctx
		}, wantStop: agent.StopAborted, wantSteps: 0, wantRuns: 0, wantErr: context.Canceled},
		{name: "model error", model: failing{errors.New("boom")}, wantStop: agent.StopError, wantSteps: 1, wantErr: errBoom},
		{name: "model panic", model: panicking{}, wantStop: agent.StopError, wantSteps: 1},
		{name: "nil response", model: nilModel{}, wantStop: agent.StopError, wantSteps: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := &probe{name: "probe"}
			m := c.model
			if m == nil {
				m = script(t, c.script)
			}
			ctx := t.Context()
			if c.ctx != nil {
				ctx = c.ctx(t)
			}
			log := &memLog{}
			res := fixture{model: m, tools: []tool.Tool{p}, limits: c.limits, log: log}.loop(t).Run(ctx, "task")
			if res.Stop != c.wantStop || res.Steps != c.wantSteps || p.Runs() != c.wantRuns {
				t.Fatalf("stop %s after %d steps and %d runs (err %v), want %s after %d steps and %d runs",
					res.Stop, res.Steps, p.Runs(), res.Err, c.wantStop, c.wantSteps, c.wantRuns)
			}
			if c.wantErr != nil && !errors.Is(res.Err, c.wantErr) && !(c.wantErr == errBoom && res.Err != nil) {
				t.Errorf("err %v, want %v", res.Err, c.wantErr)
			}
			if res.Stop == agent.StopDone && res.Answer != "the end" {
				t.Errorf("answer %q", res.Answer)
			}
			if res.Stop != agent.StopDone && res.Answer != "" {
				t.Errorf("answer %q on stop %s", res.Answer, res.Stop)
			}
			types := log.types()
			if types[0] != "session_start" || types[len(types)-1] != "stop" {
				t.Errorf("records %v: want session_start first and stop last", types)
			}
			if n := strings.Count(strings.Join(types, " "), "stop"); n != 1 {
				t.Errorf("%d stop records", n)
			}
		})
	}
}

var errBoom = errors.New("boom")

type failing struct{ err error }

func (f failing) Generate(context.Context, *model.Request) (*model.Response, error) {
	return nil, f.err
}

type panicking struct{}

func (panicking) Generate(context.Context, *model.Request) (*model.Response, error) {
	panic("bad model")
}

type nilModel struct{}

func (nilModel) Generate(context.Context, *model.Request) (*model.Response, error) { return nil, nil }

func TestTimeout(t *testing.T) {
	t.Parallel()
	slow := &probe{name: "probe", run: func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}
	res := fixture{model: script(t, twoCalls), tools: []tool.Tool{slow}, limits: budget.Limits{MaxWall: 20 * time.Millisecond}}.loop(t).Run(t.Context(), "task")
	if res.Stop != agent.StopTimeout || !errors.Is(res.Err, agent.ErrWallTime) {
		t.Fatalf("stop %s (%v), want timeout", res.Stop, res.Err)
	}
}

func TestAbortDuringTool(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	p := &probe{name: "probe", run: func(ctx context.Context) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	}}
	log := &memLog{}
	res := fixture{model: script(t, twoCalls), tools: []tool.Tool{p}, log: log}.loop(t).Run(ctx, "task")
	if res.Stop != agent.StopAborted || p.Runs() != 1 {
		t.Fatalf("stop %s after %d runs, want aborted after 1", res.Stop, p.Runs())
	}
	got := strings.Join(log.types(), " ")
	if !strings.HasSuffix(got, "intent result abort stop") {
		t.Errorf("records %s: the interrupted call's result, the abort and the stop must be recorded", got)
	}
}

// A denied call never reaches its tool, and the refusal goes back to the
// model as an error result; the loop goes on.
func TestDeniedCallNeverRuns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		allowed  []string
		approver approve.Approver
		effect   tool.Effect
		args     string
		gate     string
	}{
		{name: "not on allowlist", allowed: []string{"other"}, gate: gate.NameAvailability},
		{name: "approver says no", effect: tool.Irreversible, approver: approve.Fixed(false), gate: gate.NameApproval},
		{name: "default approver", effect: tool.Irreversible, gate: gate.NameApproval},
		{name: "approver fails", effect: tool.Irreversible, approver: approve.Func(func(context.Context, approve.Request) (bool, error) {
			return true, errors.New("tty gone")
		}), gate: gate.NameApproval},
		{name: "malformed args", args: `{"path":`, gate: gate.NameValidation},
		{name: "args not an object", args: `[1,2]`, gate: gate.NameValidation},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := &probe{name: "probe", effect: c.effect}
			other := &probe{name: "other"}
			call := `{"tool":"probe"}`
			if c.args != "" {
				raw, _ := json.Marshal(c.args)
				call = `{"tool":"probe","args_raw":` + string(raw) + `}`
			}
			m := script(t, `{"turns":[{"text":"try","calls":[`+call+`]},{"text":"gave up"}]}`)
			log := &memLog{}
			res := fixture{model: m, tools: []tool.Tool{p, other}, allowed: c.allowed, approver: c.approver, log: log}.loop(t).Run(t.Context(), "task")
			if p.Runs() != 0 {
				t.Fatalf("the denied tool ran %d times", p.Runs())
			}
			if res.Stop != agent.StopDone || res.Refusals[c.gate] != 1 {
				t.Fatalf("stop %s refusals %v, want done with one refusal by %s", res.Stop, res.Refusals, c.gate)
			}
			r := lastResult(res.Messages)
			if r == nil || !r.IsError || !strings.HasPrefix(r.Content, "Refused: ") {
				t.Fatalf("the model got %+v, want an error result starting with Refused:", r)
			}
			var verdict *audit.Record
			for i := range log.recs {
				if log.recs[i].Type == audit.Verdict {
					verdict = &log.recs[i]
				}
				if log.recs[i].Type == audit.Intent {
					t.Errorf("an intent was recorded for a denied call")
				}
			}
			if verdict == nil || !verdict.Decision.Is(gate.Deny) || verdict.Gate != c.gate || verdict.Reason == "" {
				t.Errorf("verdict record %+v, want deny by %s with a reason", verdict, c.gate)
			}
		})
	}
}

func lastResult(msgs []model.Message) *model.ToolResult {
	for i := len(msgs) - 1; i >= 0; i-- {
		for j := len(msgs[i].Blocks) - 1; j >= 0; j-- {
			if b := msgs[i].Blocks[j]; b.Kind == model.KindToolResult {
				return b.Result
			}
		}
	}
	return nil
}

func TestApprovedIrreversibleRuns(t *testing.T) {
	t.Parallel()
	p := &probe{name: "probe", effect: tool.Irreversible}
	rec := &approve.Recorder{Next: approve.Fixed(true)}
	m := script(t, `{"turns":[{"text":"send","calls":[{"tool":"probe","args":{"to":"x"}}]},{"text":"sent"}]}`)
	res := fixture{model: m, tools: []tool.Tool{p}, approver: rec}.loop(t).Run(t.Context(), "task")
	if res.Stop != agent.StopDone || p.Runs() != 1 {
		t.Fatalf("stop %s, runs %d", res.Stop, p.Runs())
	}
	reqs := rec.Requests()
	if len(reqs) != 1 || reqs[0].Tool != "probe" || string(reqs[0].Args) != `{"to":"x"}` || reqs[0].Gate != gate.NameConfirm {
		t.Fatalf("approver saw %+v: want the whole call and the asking gate", reqs)
	}
}

// Tool failures and panics are results for the model, not the end of the run.
func TestToolFailuresGoBackToTheModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		run  func(context.Context) (string, error)
		want string
	}{
		{"error", func(context.Context) (string, error) { return "", errors.New("disk on fire") }, "Error: disk on fire"},
		{"panic", func(context.Context) (string, error) { panic("oops") }, "crashed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := &probe{name: "probe", run: c.run}
			res := fixture{model: script(t, twoCalls), tools: []tool.Tool{p}}.loop(t).Run(t.Context(), "task")
			if res.Stop != agent.StopDone || p.Runs() != 3 {
				t.Fatalf("stop %s after %d runs", res.Stop, p.Runs())
			}
			r := lastResult(res.Messages)
			if !r.IsError || !strings.Contains(r.Content, c.want) {
				t.Fatalf("result %+v, want an error containing %q", r, c.want)
			}
		})
	}
}

// A tool that cannot work any more (tool.ErrFatal: its sandbox is dead)
// stops the run with an error that says why, after its result is logged;
// the model is not asked to try again.
func TestFatalToolErrorStopsTheRun(t *testing.T) {
	t.Parallel()
	dead := fmt.Errorf("%w: the sandbox died twice", tool.ErrFatal)
	p := &probe{name: "probe", run: func(context.Context) (string, error) { return "", dead }}
	log := &memLog{}
	res := fixture{model: script(t, twoCalls), tools: []tool.Tool{p}, log: log}.loop(t).Run(t.Context(), "task")
	if res.Stop != agent.StopError || !errors.Is(res.Err, tool.ErrFatal) || p.Runs() != 1 {
		t.Fatalf("stop %s (%v) after %d runs; want error after 1", res.Stop, res.Err, p.Runs())
	}
	var result bool
	for _, r := range log.recs {
		result = result || r.Type == audit.Result && r.IsError && strings.Contains(r.Content, "died twice")
	}
	if !result {
		t.Errorf("no error result logged for the fatal call: %+v", log.recs)
	}
}

// When the budget is exceeded by a response, no tool of that response runs.
func TestBudgetCheckedBeforeTools(t *testing.T) {
	t.Parallel()
	p := &probe{name: "probe"}
	m := script(t, `{"turns":[
	  {"text":"one","calls":[{"tool":"probe"}],"usage":{"input":10,"output":10}},
	  {"text":"two","calls":[{"tool":"probe"},{"tool":"probe"}],"usage":{"input":50,"output":50}}]}`)
	log := &memLog{}
	res := fixture{model: m, tools: []tool.Tool{p}, limits: budget.Limits{MaxTokens: 100}, log: log}.loop(t).Run(t.Context(), "task")
	if res.Stop != agent.StopBudget || p.Runs() != 1 || res.Tokens != 120 {
		t.Fatalf("stop %s, runs %d, tokens %d: want budget, 1 run, 120 tokens", res.Stop, p.Runs(), res.Tokens)
	}
	want := "session_start model_call verdict intent result model_call verdict stop"
	if got := strings.Join(log.types(), " "); got != want {
		t.Fatalf("records\n %s\nwant\n %s", got, want)
	}
	v := log.recs[6]
	if v.Gate != gate.NameBudget || !v.Decision.Is(gate.Deny) {
		t.Errorf("budget verdict %+v", v)
	}
}

// The intent is written before the tool runs; if it cannot be written, the
// tool does not run and the run stops with an error.
func TestNoRecordNoEffect(t *testing.T) {
	t.Parallel()
	var intentSeen bool
	log := &memLog{}
	p := &probe{name: "probe", run: func(context.Context) (string, error) {
		for _, ty := range log.types() {
			intentSeen = intentSeen || ty == "intent"
		}
		return "ok", nil
	}}
	res := fixture{model: script(t, twoCalls), tools: []tool.Tool{p}, log: log}.loop(t).Run(t.Context(), "task")
	if res.Stop != agent.StopDone || !intentSeen {
		t.Fatalf("stop %s, intent recorded before run: %v", res.Stop, intentSeen)
	}

	failing := &memLog{failOn: audit.Intent, failErr: errors.New("disk full")}
	p2 := &probe{name: "probe"}
	res = fixture{model: script(t, twoCalls), tools: []tool.Tool{p2}, log: failing}.loop(t).Run(t.Context(), "task")
	if res.Stop != agent.StopError || p2.Runs() != 0 {
		t.Fatalf("stop %s after %d runs, want error after 0", res.Stop, p2.Runs())
	}
}

// Only allowed tools are offered to the model.
func TestOfferedTools(t *testing.T) {
	t.Parallel()
	var seen []string
	m := modelFunc(func(_ context.Context, req *model.Request) (*model.Response, error) {
		for _, d := range req.Tools {
			seen = append(seen, d.Name)
		}
		return &model.Response{Blocks: []model.Block{model.TextBlock("done")}}, nil
	})
	a, b := &probe{name: "a"}, &probe{name: "b"}
	l := fixture{model: m, tools: []tool.Tool{a, b}, allowed: []string{"b"}}.loop(t)
	if res := l.Run(t.Context(), "task"); res.Stop != agent.StopDone {
		t.Fatal(res.Stop)
	}
	if fmt.Sprint(seen) != "[b]" || fmt.Sprint(l.Offered()) != "[b]" {
		t.Fatalf("offered %v / %v, want [b]", seen, l.Offered())
	}
}

type modelFunc func(context.Context, *model.Request) (*model.Response, error)

func (f modelFunc) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return f(ctx, req)
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	reg, _ := tool.NewRegistry()
	p := gate.NewPipeline(nil)
	m := script(t, twoCalls)
	for name, cfg := range map[string]agent.Config{
		"no model":        {Tools: reg, Gates: p},
		"no tools":        {Model: m, Gates: p},
		"no gates":        {Model: m, Tools: reg},
		"negative limits": {Model: m, Tools: reg, Gates: p, Limits: budget.Limits{MaxSteps: -1}},
		"bad meta":        {Model: m, Tools: reg, Gates: p, Meta: json.RawMessage(`{`)},
	} {
		if _, err := agent.New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}
