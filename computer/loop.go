package computer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// Observations the model is told.
const (
	NoEffect   = "the screen did not change — the action had no effect"
	ScreenMove = "the screen changed"
)

// Config is everything a Loop needs. Model and Env are required.
type Config struct {
	Model Model
	// ModelName is recorded in the session_start record.
	ModelName string
	Env       Env
	// Approver is asked about irreversible actions; nil says no to all.
	Approver approve.Approver
	// Audit receives every record; nil keeps none.
	Audit AuditLog
	// Session is the session id, for idempotency keys.
	Session string
	// Limits: zero MaxSteps means DefaultMaxSteps, zero MaxWall
	// DefaultMaxWall; MaxToolCalls caps actions, MaxCostUSD cost.
	Limits budget.Limits
	// Price turns a decision's usage into dollars; nil counts no cost.
	Price func(model.Usage) float64
	// Policy says what is allowed; its zero Words means DefaultWords.
	Policy Policy
	// System replaces the system instructions (tests); "" means System.
	System string
	// Meta is recorded in the session_start record (allowlist, start URL).
	Meta json.RawMessage
}

// Result is how a run ended and what it did.
type Result struct {
	Stop agent.StopReason `json:"stop"`
	// Summary is the model's done() summary; empty unless Stop is done.
	Summary string      `json:"summary,omitempty"`
	Steps   int         `json:"steps"`
	Actions int         `json:"actions"` // actions performed
	Usage   model.Usage `json:"usage"`
	Tokens  int64       `json:"tokens"`
	CostUSD float64     `json:"cost_usd"`
	// NoEffect counts actions after which the screen was unchanged, and
	// Recoveries those of them followed by an action that changed it.
	NoEffect   int `json:"no_effect"`
	Recoveries int `json:"recoveries"`
	// Approvals counts the times a human was asked, Refusals the actions
	// refused by gate (a human's no included).
	Approvals int                `json:"approvals"`
	Refusals  map[string]int     `json:"refusals,omitempty"`
	Denied    *Action            `json:"denied,omitempty"` // the action a human said no to
	Blocked   []BlockedRequest   `json:"blocked,omitempty"`
	History   []Turn             `json:"history,omitempty"`
	Final     Screenshot         `json:"-"`
	Err       error              `json:"-"`
	Verdicts  []gate.Verdict     `json:"-"`
	Elements  map[string]Element `json:"-"` // by call id: what each action acted on
}

// Loop runs tasks on one environment.
type Loop struct {
	cfg Config
}

// New checks cfg and returns a Loop.
func New(cfg Config) (*Loop, error) {
	if cfg.Model == nil {
		return nil, errors.New("computer: no model: set Config.Model")
	}
	if cfg.Env == nil {
		return nil, errors.New("computer: no environment: set Config.Env (computer/browser)")
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("computer: %w", err)
	}
	if cfg.Limits.MaxSteps == 0 {
		cfg.Limits.MaxSteps = DefaultMaxSteps
	}
	if cfg.Limits.MaxWall == 0 {
		cfg.Limits.MaxWall = DefaultMaxWall
	}
	if cfg.Approver == nil {
		cfg.Approver = approve.Deny{}
	}
	if cfg.Policy.Words.phrases == nil {
		cfg.Policy.Words = NewWords(DefaultWords())
	}
	if cfg.System == "" {
		cfg.System = System
	}
	return &Loop{cfg: cfg}, nil
}

type stop struct {
	reason agent.StopReason
	err    error
}

type run struct {
	l        *Loop
	ctx      context.Context
	meter    *budget.Meter
	res      Result
	shot     Screenshot
	hash     string
	pending  bool // an action had no effect and no later action changed the screen yet
	inflight *audit.Record
}

// Run runs task until it stops, and reports why. It returns after the stop
// is recorded.
func (l *Loop) Run(ctx context.Context, task string) Result {
	ctx, cancel := context.WithTimeoutCause(ctx, l.cfg.Limits.MaxWall, agent.ErrWallTime)
	defer cancel()
	r := &run{l: l, ctx: ctx, meter: budget.NewMeter(l.cfg.Limits),
		res: Result{Refusals: map[string]int{}, Elements: map[string]Element{}}}
	s := r.start(task)
	for s == nil {
		s = r.step(task)
	}
	return r.finish(s)
}

func (r *run) record(rec audit.Record) *stop {
	if r.l.cfg.Audit == nil {
		return nil
	}
	if err := r.l.cfg.Audit.Write(rec); err != nil {
		return &stop{agent.StopError, err}
	}
	return nil
}

func (r *run) ctxStop() *stop {
	if r.ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(r.ctx)
	if errors.Is(cause, agent.ErrWallTime) {
		return &stop{agent.StopTimeout, cause}
	}
	return &stop{agent.StopAborted, cause}
}

func (r *run) start(task string) *stop {
	cfg := mustJSON(struct {
		Model  string          `json:"model,omitempty"`
		Tools  []Kind          `json:"tools"`
		Gates  []string        `json:"gates"`
		Limits budget.Limits   `json:"limits"`
		System string          `json:"system"`
		Meta   json.RawMessage `json:"meta,omitempty"`
	}{r.l.cfg.ModelName, []Kind{Click, Type, Scroll, Key, Wait, Done},
		r.gates(), r.l.cfg.Limits, r.l.cfg.System, r.l.cfg.Meta})
	if s := r.record(audit.Record{Type: audit.SessionStart, Task: task, Config: cfg}); s != nil {
		return s
	}
	if s := r.look(); s != nil {
		return s
	}
	_, s := r.drain(0, "")
	return s
}

// drain records the requests the environment blocked since the last call
// and returns what to tell the model about them.
func (r *run) drain(step int, id string) (string, *stop) {
	obs := ""
	for _, b := range r.l.cfg.Env.Blocked() {
		r.res.Blocked = append(r.res.Blocked, b)
		r.res.Refusals[GateNetwork]++
		kind := "a sub-resource"
		if b.Navigation {
			kind = "a page load"
		}
		if s := r.record(audit.Record{Type: audit.Verdict, Step: step, CallID: id, Tool: "browser.request",
			Args: mustJSON(b), Decision: audit.DecisionOf(gate.Deny), Gate: GateNetwork,
			Reason: fmt.Sprintf("%s from %s blocked: host %q is not on the allowlist", kind, b.URL, b.Host)}); s != nil {
			return "", s
		}
		obs += fmt.Sprintf("; rein blocked %s from %s (not on the allowlist)", kind, b.Host)
	}
	return obs, nil
}

func (r *run) gates() []string {
	if r.l.cfg.Policy.Off {
		return []string{GateValidation, GateNetwork}
	}
	return []string{GateValidation, GatePassword, GateIrreversible, gate.NameApproval, GateNetwork}
}

// look takes a screenshot into r.shot and reports whether it differs from
// the last one.
func (r *run) look() *stop {
	shot, err := r.l.cfg.Env.Screenshot(r.ctx)
	if err != nil {
		if s := r.ctxStop(); s != nil {
			return s
		}
		return &stop{agent.StopError, fmt.Errorf("take a screenshot: %w", err)}
	}
	h, err := PixelHash(shot.PNG)
	if err != nil {
		return &stop{agent.StopError, fmt.Errorf("read the screenshot: %w", err)}
	}
	r.shot, r.hash = shot, h
	r.res.Final = shot
	return nil
}

func (r *run) step(task string) *stop {
	if s := r.ctxStop(); s != nil {
		return s
	}
	if err := r.meter.BeginStep(); err != nil {
		return &stop{agent.StopMaxSteps, err}
	}
	step := r.meter.Used().Steps
	req := &Request{System: r.l.cfg.System, Task: task, Screen: r.shot, History: append([]Turn(nil), r.res.History...)}
	r.inflight = &audit.Record{Step: step, Tool: "(model call)"}
	began := time.Now()
	resp, err := r.decide(req)
	took := time.Since(began)
	if err != nil {
		if s := r.ctxStop(); s != nil {
			return s
		}
		_ = r.record(audit.Record{Type: audit.ModelCall, Step: step, Error: err.Error(), DurationMS: ms(took)})
		return &stop{agent.StopError, fmt.Errorf("model call failed at step %d: %w", step, err)}
	}
	r.inflight = nil
	var cost float64
	if r.l.cfg.Price != nil {
		cost = r.l.cfg.Price(resp.Usage)
	}
	over := r.meter.Charge(resp.Usage, cost)
	a := resp.Action
	usage := resp.Usage
	if s := r.record(audit.ClipText(audit.Record{Type: audit.ModelCall, Step: step, Usage: &usage, Tokens: r.meter.Used().Tokens,
		Calls: []string{string(a.Kind)}, DurationMS: ms(took)}, clipRecord, resp.Reason)); s != nil {
		return s
	}
	if over != nil {
		if s := r.record(audit.Record{Type: audit.Verdict, Step: step, Decision: audit.DecisionOf(gate.Deny), Gate: gate.NameBudget, Reason: over.Error()}); s != nil {
			return s
		}
		return &stop{agent.StopBudget, over}
	}
	if a.Kind == Done {
		r.res.Summary = a.Summary
		return &stop{agent.StopDone, nil}
	}
	return r.act(step, a)
}

func (r *run) decide(req *Request) (resp *Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("the model panicked: %v", p)
		}
	}()
	resp, err = r.l.cfg.Model.Decide(r.ctx, req)
	if err == nil && resp == nil {
		err = errors.New("the model returned no response")
	}
	return resp, err
}

// act judges and performs one action.
func (r *run) act(step int, a Action) *stop {
	id := fmt.Sprintf("a%d", step)
	rec := audit.Record{Step: step, CallID: id, Tool: string(a.Kind), Args: mustJSON(a)}
	if err := r.meter.TakeCall(); err != nil {
		rec.Type, rec.Decision, rec.Gate, rec.Reason = audit.Verdict, audit.DecisionOf(gate.Deny), gate.NameBudget, err.Error()
		if s := r.record(rec); s != nil {
			return s
		}
		return &stop{agent.StopBudget, err}
	}
	v, el, s := r.judge(a)
	if s != nil {
		return s
	}
	r.res.Elements[id] = el
	irreversible := v.Decision == gate.Ask
	if irreversible {
		r.res.Approvals++
		ok, err := r.l.cfg.Approver.Approve(r.ctx, approve.Request{CallID: id, Tool: string(a.Kind), Args: rec.Args, Gate: v.Gate, Reason: v.Reason})
		if err != nil || !ok {
			v.Decision = gate.Deny
			v.Reason += ": the human said no"
			if err != nil {
				v.Reason += " (" + err.Error() + ")"
			}
		} else {
			v.Decision = gate.Allow
			v.Reason += ": the human said yes"
		}
	}
	r.res.Verdicts = append(r.res.Verdicts, v)
	rec.Type, rec.Decision, rec.Gate, rec.Reason = audit.Verdict, audit.DecisionOf(v.Decision), v.Gate, v.Reason
	if s := r.record(rec); s != nil {
		return s
	}
	if v.Decision != gate.Allow {
		r.res.Refusals[v.Gate]++
		r.res.History = append(r.res.History, Turn{Action: a, Observation: "refused: " + v.ForModel()})
		if s := r.ctxStop(); s != nil {
			return s // an approval cut short by an abort
		}
		if v.Gate == GateIrreversible {
			r.res.Denied = &a
			return &stop{StopDenied, fmt.Errorf("%s", v.Reason)}
		}
		return nil
	}

	rec.Type, rec.Decision, rec.Gate, rec.Reason = audit.Intent, audit.Decision{}, "", ""
	effect := tool.Reversible
	switch {
	case irreversible:
		effect = tool.Irreversible
	case a.Kind == Wait || a.Kind == Scroll:
		effect = tool.ReadOnly
	}
	rec.Effect = audit.EffectOf(effect)
	if effect != tool.ReadOnly {
		rec.Key = agent.IdempotencyKey(r.l.cfg.Session, id, string(a.Kind), rec.Args)
	}
	if s := r.record(rec); s != nil {
		return s // no record, no effect
	}
	r.inflight = &audit.Record{Step: step, CallID: id, Tool: string(a.Kind), Key: rec.Key}
	began := time.Now()
	err := r.l.cfg.Env.Perform(r.ctx, a)
	took := time.Since(began)
	if s := r.ctxStop(); s != nil {
		return s
	}
	r.inflight = nil
	r.res.Actions++
	obs, isErr := "", false
	if err != nil {
		obs, isErr = "the action failed: "+err.Error(), true
	}
	before := r.hash
	if s := r.look(); s != nil {
		return s
	}
	changed := r.hash != before
	switch {
	case isErr:
	case a.Kind == Wait && !changed:
		obs = "waited; the screen did not change"
	case !changed:
		obs = NoEffect
		r.res.NoEffect++
		r.pending = true
	default:
		obs = ScreenMove
		if r.pending {
			r.res.Recoveries++
			r.pending = false
		}
	}
	more, s := r.drain(step, id)
	if s != nil {
		return s
	}
	obs += more
	clipped, size, sum, cut := audit.Clip(obs+" [screen "+r.hash[:12]+"]", clipRecord)
	if s := r.record(audit.Record{Type: audit.Result, Step: step, CallID: id, Tool: string(a.Kind), Key: rec.Key,
		Content: clipped, IsError: isErr, Bytes: size, SHA256: sum, Truncated: cut, DurationMS: ms(took)}); s != nil {
		return s
	}
	r.res.History = append(r.res.History, Turn{Action: a, Observation: obs})
	return nil
}

// judge inspects the action's target and applies the policy. An action the
// environment cannot inspect is judged as irreversible (fail closed).
func (r *run) judge(a Action) (gate.Verdict, Element, *stop) {
	if err := a.Validate(r.shot.Width, r.shot.Height); err != nil {
		return gate.Verdict{Decision: gate.Deny, Gate: GateValidation, Reason: err.Error()}, Element{}, nil
	}
	if r.l.cfg.Policy.Off || a.Kind == Wait || a.Kind == Scroll {
		return r.l.cfg.Policy.Judge(a, Element{}), Element{}, nil
	}
	el, err := r.l.cfg.Env.Inspect(r.ctx, a)
	if err != nil {
		if s := r.ctxStop(); s != nil {
			return gate.Verdict{}, Element{}, s
		}
		el = Element{Found: true, Tag: "unknown", Opaque: true}
	}
	return r.l.cfg.Policy.Judge(a, el), el, nil
}

func (r *run) finish(s *stop) Result {
	if s.reason == agent.StopAborted {
		rec := audit.Record{Type: audit.Abort, Reason: "aborted"}
		if s.err != nil {
			rec.Reason = s.err.Error()
		}
		if f := r.inflight; f != nil {
			rec.Step, rec.CallID, rec.Tool, rec.Key = f.Step, f.CallID, f.Tool, f.Key
		}
		_ = r.record(rec)
	}
	used := r.meter.Used()
	r.res.Stop, r.res.Err = s.reason, s.err
	r.res.Steps = used.Steps
	r.res.Usage, r.res.Tokens, r.res.CostUSD = used.Usage, used.Tokens, used.CostUSD
	rec := audit.ClipText(audit.Record{Type: audit.Stop, Stop: s.reason,
		Steps: used.Steps, ToolCalls: used.ToolCalls, Tokens: used.Tokens}, clipRecord, r.res.Summary)
	if s.err != nil {
		rec.Error = s.err.Error()
	}
	if st := r.record(rec); st != nil && r.res.Err == nil {
		r.res.Stop, r.res.Err = agent.StopError, fmt.Errorf("record the stop: %w", st.err)
	}
	return r.res
}

// clipRecord is how many bytes of a result, of the model's reason or of the
// done() summary an audit record keeps.
const clipRecord = 4096

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
