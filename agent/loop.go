package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// ErrModelCall wraps the error of a run stopped because the model call
// failed (after the provider's own retries): the network, the key, the
// provider. A conversation ends the turn on it, not the session.
var ErrModelCall = errors.New("model call failed")

// ErrWallTime is the cause of a run's context when its wall-time cap passes.
var ErrWallTime = errors.New("wall-time budget exceeded")

// refusedPrefix starts the result of a call the gates refused.
const refusedPrefix = "Refused: "

// errStop carries a stop reason and its cause out of a step.
type errStop struct {
	reason StopReason
	err    error
}

// run is the state of one Run.
type run struct {
	l        *Loop
	ctx      context.Context
	meter    *budget.Meter
	msgs     []model.Message
	res      Result
	answer   string
	inflight *audit.Record              // the tool call running, or the model call waiting, when an abort comes
	unnoted  []*model.ToolCall          // resume: calls of the rebuilt conversation whose arguments the Provenance has not been told
	view     view                       // the conversation as the model reads it, rendered and counted as it grows
	args     map[string]json.RawMessage // resume: each call's arguments by id, to tell a result with its call
	answered []model.ToolResult         // the answers of a step cut short, recorded before the stop (Result.Answered)
	judged   map[string]bool            // the calls whose verdict is in the log
}

// dropUnjudged takes out of the conversation's last message, the model's,
// the calls that never reached a verdict.
func (r *run) dropUnjudged() {
	n := len(r.msgs)
	if n == 0 || r.msgs[n-1].Role != model.RoleAssistant {
		return
	}
	last := r.msgs[n-1]
	kept := make([]model.Block, 0, len(last.Blocks))
	for _, b := range last.Blocks {
		if b.Kind == model.KindToolCall && b.Call != nil && !r.judged[b.Call.ID] {
			continue
		}
		kept = append(kept, b)
	}
	if len(kept) == 0 { // no text, no call judged: the message says nothing
		r.msgs = r.msgs[:n-1]
		return
	}
	last.Blocks = kept
	r.msgs[n-1] = last
}

// Run runs task until it stops, and reports why. It never panics on model or
// tool misbehaviour, and it returns only after the stop is recorded.
func (l *Loop) Run(ctx context.Context, task string) Result {
	if l.cfg.Limits.MaxWall > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, l.cfg.Limits.MaxWall, ErrWallTime)
		defer cancel()
	}
	if l.cfg.Redact != nil {
		task = l.cfg.Redact(task)
	}
	l.tellDescriptions()
	l.tellTask(task)
	r := &run{
		l:      l,
		view:   view{l: l},
		ctx:    ctx,
		meter:  budget.NewMeter(l.cfg.Limits),
		msgs:   []model.Message{{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock(task)}}},
		res:    Result{Refusals: map[string]int{}},
		judged: map[string]bool{},
	}
	stop := r.start(task)
	for stop == nil {
		stop = r.step()
	}
	return r.finish(stop)
}

// record writes rec to the audit log. A record that cannot be written stops
// the run: rein does not act unrecorded.
func (r *run) record(rec audit.Record) *errStop {
	if r.l.cfg.Audit == nil {
		return nil
	}
	if err := r.l.cfg.Audit.Write(rec); err != nil {
		return &errStop{StopError, err}
	}
	return nil
}

type startConfig struct {
	Model  string          `json:"model,omitempty"`
	Tools  []string        `json:"tools"`
	Gates  []string        `json:"gates"`
	Limits budget.Limits   `json:"limits"`
	System string          `json:"system,omitempty"`
	Meta   json.RawMessage `json:"meta,omitempty"`
}

func (r *run) start(task string) *errStop {
	cfg, err := json.Marshal(startConfig{
		Model:  r.l.cfg.ModelName,
		Tools:  r.l.Offered(),
		Gates:  r.l.cfg.Gates.Names(),
		Limits: r.l.cfg.Limits,
		System: r.l.cfg.System,
		Meta:   r.l.cfg.Meta,
	})
	if err != nil {
		return &errStop{StopError, fmt.Errorf("encode session config: %w", err)}
	}
	if s := r.record(audit.Record{Type: audit.SessionStart, Task: task, Config: cfg}); s != nil {
		return s
	}
	if r.l.cfg.Attach == nil {
		return nil
	}
	blocks, err := r.l.cfg.Attach(r.ctx)
	if err != nil {
		if s := r.ctxStop(); s != nil {
			return s
		}
		return &errStop{StopError, fmt.Errorf("attach to the task: %w", err)}
	}
	r.msgs[0].Blocks = append(r.msgs[0].Blocks, blocks...)
	return nil
}

// ctxStop reports a stop when the run's context is done.
func (r *run) ctxStop() *errStop {
	if r.ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(r.ctx)
	if errors.Is(cause, ErrWallTime) {
		return &errStop{StopTimeout, cause}
	}
	return &errStop{StopAborted, cause}
}

// step makes one model call and runs its tool calls. It returns nil to go on.
func (r *run) step() *errStop {
	if s := r.ctxStop(); s != nil {
		return s
	}
	if err := r.meter.BeginStep(); err != nil {
		return &errStop{StopMaxSteps, err}
	}
	step := r.meter.Used().Steps
	if msgs, ok := r.view.compacted(r.msgs); ok {
		r.msgs = msgs
	}
	req := r.view.request(r.msgs)
	ticket, est, s := r.reserve(step, req)
	if s != nil {
		return s
	}
	began := time.Now()
	r.inflight = &audit.Record{Step: step, Tool: "(model call)"}
	resp, err := r.generate(req)
	took := time.Since(began)
	if err != nil {
		if s := r.ctxStop(); s != nil {
			_ = r.settle(ticket, est) // cut short: it may have been billed as far as it went
			return s                  // an abort while the model was asked: it is in flight
		}
		if s := r.settle(ticket, budget.Charge{}); s != nil {
			return s
		}
		// If this record cannot be written, neither can the stop; the model's
		// error is the one to report.
		_ = r.record(audit.Record{Type: audit.ModelCall, Step: step, Error: err.Error(), DurationMS: ms(took)})
		return &errStop{StopError, fmt.Errorf("%w at step %d: %w", ErrModelCall, step, err)}
	}
	r.inflight = nil
	var cost float64
	if r.l.cfg.Price != nil {
		cost = r.l.cfg.Price(resp.Usage)
	}
	if s := r.settle(ticket, budget.Charge{Tokens: resp.Usage.Total(), CostUSD: cost}); s != nil {
		return s
	}
	overErr := r.meter.Charge(resp.Usage, cost)
	calls := resp.Calls()
	usage := resp.Usage
	if s := r.record(audit.ClipText(audit.Record{
		Type: audit.ModelCall, Step: step, Usage: &usage, Tokens: r.meter.Used().Tokens,
		Calls: callNames(calls), ModelStop: resp.StopReason, DurationMS: ms(took),
	}, r.l.cfg.ClipResults, resp.Text())); s != nil {
		return s
	}
	if overErr != nil {
		// Checked before any tool of this response runs: afterwards is too late.
		if s := r.record(audit.Record{Type: audit.Verdict, Step: step, Decision: audit.DecisionOf(gate.Deny), Gate: gate.NameBudget, Reason: overErr.Error()}); s != nil {
			return s
		}
		return &errStop{StopBudget, overErr}
	}
	for _, c := range calls {
		c.Args = compactArgs(c.Args) // as the audit log keeps them: a resumed conversation is the same bytes
	}
	r.msgs = append(r.msgs, model.Message{Role: model.RoleAssistant, Blocks: resp.Blocks})
	if len(calls) == 0 {
		r.answer = resp.Text()
		switch resp.StopReason {
		case model.StopEndTurn, model.StopToolUse, "":
		default:
			// max_tokens, refusal, anything else: the task stops here, and
			// the answer says why, so nobody takes a cut answer for a whole one.
			r.answer = strings.TrimSpace(r.answer + "\n\n[the model stopped: " + resp.StopReason + "]")
		}
		return &errStop{StopDone, nil}
	}
	results := make([]model.Block, 0, len(calls))
	for _, c := range calls {
		res, stop := r.call(step, c, true)
		if res.CallID != "" {
			results = append(results, model.ResultBlock(res))
		}
		if stop != nil {
			// Cut short: the conversation ends with the model's message,
			// holding the calls the log has a verdict for (a call never
			// judged left no arguments in the log: a conversation rebuilt
			// from it cannot have it either); the answers recorded so far
			// are kept for a next turn.
			r.dropUnjudged()
			for _, b := range results {
				r.answered = append(r.answered, *b.Result)
			}
			return stop
		}
	}
	r.msgs = append(r.msgs, model.Message{Role: model.RoleUser, Blocks: results})
	return nil
}

// reserve asks the shared ledger, when there is one, to admit the model
// call of req: it is expected to use its input as counted. A cap reached
// stops the run with StopBudget, recorded as the budget gate's refusal; a
// ledger that cannot be asked stops it with StopError.
func (r *run) reserve(step int, req *model.Request) (string, budget.Charge, *errStop) {
	lg := r.l.cfg.Ledger
	if lg == nil {
		return "", budget.Charge{}, nil
	}
	est := budget.Charge{Session: r.l.cfg.Session, Step: step, Tokens: r.view.est.Estimate(req)}
	if r.l.cfg.Price != nil {
		est.CostUSD = r.l.cfg.Price(model.Usage{Input: est.Tokens})
	}
	ticket, err := lg.Reserve(r.ctx, est)
	if err == nil {
		return ticket, est, nil
	}
	if s := r.ctxStop(); s != nil {
		return "", est, s
	}
	var ex *budget.ExceededError
	if !errors.As(err, &ex) {
		return "", est, &errStop{StopError, fmt.Errorf("the budget ledger could not be asked, so no model call is made (fail closed): %w", err)}
	}
	if s := r.record(audit.Record{Type: audit.Verdict, Step: step, Decision: audit.DecisionOf(gate.Deny), Gate: gate.NameBudget, Reason: err.Error()}); s != nil {
		return "", est, s
	}
	return "", est, &errStop{StopBudget, err}
}

// settle tells the shared ledger what the call of ticket used. A ledger
// that cannot take it stops the run: the next call could not be judged.
func (r *run) settle(ticket string, used budget.Charge) *errStop {
	if r.l.cfg.Ledger == nil {
		return nil
	}
	used.Session = r.l.cfg.Session
	// The call was made: its use is told even when the run is being aborted.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), 30*time.Second)
	defer cancel()
	if err := r.l.cfg.Ledger.Settle(ctx, ticket, used); err != nil {
		return &errStop{StopError, fmt.Errorf("the budget ledger did not take a model call's use, so no further call is made (fail closed): %w", err)}
	}
	return nil
}

func (r *run) generate(req *model.Request) (resp *model.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("the model panicked: %v", p)
		}
	}()
	resp, err = r.l.cfg.Model.Generate(r.ctx, req)
	if err == nil && resp == nil {
		err = errors.New("the model returned no response")
	}
	return resp, err
}

// call decides and, when allowed, runs one tool call. charge counts it
// against the tool-call cap; a call run again on resume was counted already.
func (r *run) call(step int, c *model.ToolCall, charge bool) (model.ToolResult, *errStop) {
	if s := r.ctxStop(); s != nil {
		return model.ToolResult{}, s
	}
	rec := audit.Record{Step: step, CallID: c.ID, Tool: c.Name, Args: safeArgs(c.Args)}
	t, _ := r.l.cfg.Tools.Lookup(c.Name)
	if r.l.cfg.Provenance != nil { // the model's own words, whatever becomes of the call
		noteArgs(r.l.cfg.Provenance, t, c.Args)
	}
	if err := r.take(charge); err != nil {
		rec.Type, rec.Decision, rec.Gate, rec.Reason = audit.Verdict, audit.DecisionOf(gate.Deny), gate.NameBudget, err.Error()
		rec.Content = refusedPrefix + "the " + gate.NameBudget + " gate: " + err.Error()
		if s := r.record(rec); s != nil {
			return model.ToolResult{}, s
		}
		r.judged[c.ID] = true
		return model.ToolResult{CallID: c.ID, Name: c.Name, Content: rec.Content, IsError: true, Refused: true}, &errStop{StopBudget, err}
	}
	call := &gate.Call{ID: c.ID, Name: c.Name, Args: c.Args, Tool: t}
	v := r.l.cfg.Gates.Decide(r.ctx, call)
	if v.Decision == gate.Allow && t == nil {
		// A pipeline without an availability gate let an unknown tool through.
		v = gate.UnknownTool(c.Name)
	}
	rec.Type, rec.Decision, rec.Gate, rec.Reason = audit.Verdict, audit.DecisionOf(v.Decision), v.Gate, v.Reason
	rec.Approval = v.Answer
	if v.Decision != gate.Allow {
		rec.Content = refusedPrefix + v.ForModel() // what the model is told, for a resumed conversation
	}
	if s := r.record(rec); s != nil {
		return model.ToolResult{}, s
	}
	r.judged[c.ID] = true
	if v.Decision != gate.Allow {
		r.res.Refusals[v.Gate]++
		refused := model.ToolResult{CallID: c.ID, Name: c.Name, Content: rec.Content, IsError: true, Refused: true}
		if s := r.ctxStop(); s != nil { // an approval cut short by an abort
			return refused, s
		}
		return refused, nil
	}

	rec.Type, rec.Decision, rec.Gate, rec.Reason, rec.Approval = audit.Intent, audit.Decision{}, "", "", nil
	effect := call.Effect(r.ctx) // the class the gates judged (tool.Effector)
	rec.Effect = audit.EffectOf(effect)
	if effect != tool.ReadOnly {
		rec.Key = IdempotencyKey(r.l.cfg.Session, c.ID, c.Name, c.Args)
	}
	if err := r.checkLinked(); err != nil {
		return model.ToolResult{}, &errStop{StopError, err} // what follows could not be recorded
	}
	snaps, paths, err := r.snapshot(t, c.Args)
	if err != nil {
		res := model.ToolResult{CallID: c.ID, Name: c.Name, IsError: true, Refused: true,
			Content: "Error: the files this call would change could not be saved for rollback, so it did not run: " + err.Error()}
		if s := r.record(audit.Record{Type: audit.Result, Step: step, CallID: c.ID, Tool: c.Name, Content: res.Content, IsError: true, Refused: true}); s != nil {
			return model.ToolResult{}, s
		}
		return res, nil
	}
	rec.Snapshots = snaps
	if s := r.record(rec); s != nil {
		return model.ToolResult{}, s // no record, no effect
	}
	began := time.Now()
	r.inflight = &audit.Record{Step: step, CallID: c.ID, Tool: c.Name, Key: rec.Key}
	out, images, src, err := runTool(r.ctx, t, call)
	took := time.Since(began)
	if st, ok := r.l.cfg.Snapshots.(settler); ok && len(paths) > 0 {
		st.Settle(paths...)
	}
	if r.ctx.Err() == nil {
		r.inflight = nil // it finished before any abort
	}
	r.l.cfg.Gates.Ran(call)
	if errors.Is(err, tool.ErrFatal) && r.ctx.Err() == nil {
		res := "Error: " + err.Error()
		if s := r.record(audit.Record{Type: audit.Result, Step: step, CallID: c.ID, Tool: c.Name, Key: rec.Key, Content: res, IsError: true, DurationMS: ms(took)}); s != nil {
			return model.ToolResult{}, s
		}
		return model.ToolResult{CallID: c.ID, Name: c.Name, Content: res, IsError: true}, &errStop{StopError, fmt.Errorf("%s: %w", c.Name, err)}
	}
	res := model.ToolResult{CallID: c.ID, Name: c.Name, Content: out, Images: images, Source: src}
	if err != nil {
		// A failure is the tool's words about itself, from no source.
		res.Content, res.IsError, res.Source = "Error: "+err.Error(), true, model.Source{}
	}
	if r.l.cfg.Redact != nil {
		res.Content = r.l.cfg.Redact(res.Content)
		res.Source.Location = r.l.cfg.Redact(res.Source.Location)
	}
	clipped, size, sum, cut := audit.Clip(res.Content, r.l.cfg.ClipResults)
	if s := r.record(audit.Record{
		Type: audit.Result, Step: step, CallID: c.ID, Tool: c.Name, Key: rec.Key, Content: clipped, IsError: res.IsError,
		Source: res.Source, Bytes: size, SHA256: sum, Truncated: cut, DurationMS: ms(took),
	}); s != nil {
		return model.ToolResult{}, s
	}
	r.l.tell(res, c.Args) // recorded: in the conversation even if an abort cuts the step here
	if s := r.ctxStop(); s != nil {
		return res, s
	}
	return res, nil
}

// compactArgs returns args without insignificant white space, as the audit
// log keeps them; anything that is not JSON as it is.
func compactArgs(args json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, args) != nil || b.Len() == len(args) {
		return args
	}
	return b.Bytes()
}

// take counts a call against the tool-call cap, when charge says to.
func (r *run) take(charge bool) error {
	if !charge {
		return nil
	}
	return r.meter.TakeCall()
}

// snapshot saves the files a call may change, when the tool names them and
// the loop has a Snapshotter, and returns the snapshot ids and the paths.
func (r *run) snapshot(t tool.Tool, args json.RawMessage) (ids, paths []string, err error) {
	ch, ok := t.(tool.Changer)
	if !ok || r.l.cfg.Snapshots == nil {
		return nil, nil, nil
	}
	paths, err = changes(ch, args)
	if err != nil {
		return nil, nil, err
	}
	ids = make([]string, 0, len(paths))
	for _, p := range paths {
		id, err := r.l.cfg.Snapshots.Snapshot(p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		ids = append(ids, id)
	}
	return ids, paths, nil
}

// settler is a Snapshotter that also records, after a call ran, what it
// left at the paths saved for it, so that a rollback can tell the agent's
// version from a later edit and keep the edit. It reports its own failures
// (a path left unrecorded is restored with a copy kept).
type settler interface {
	Settle(paths ...string)
}

// linkChecker is an audit log or a snapshot store that can tell whether
// its file is still where it was opened (not deleted, not replaced).
type linkChecker interface {
	CheckLinked() error
}

// checkLinked stops the run before an intent when the audit log or the
// rollback journal is no longer linked where it was opened (the state
// directory deleted, the log replaced): what rein wrote next would be lost.
func (r *run) checkLinked() error {
	for _, v := range []any{r.l.cfg.Audit, r.l.cfg.Snapshots} {
		if c, ok := v.(linkChecker); ok {
			if err := c.CheckLinked(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *run) finish(stop *errStop) Result {
	if stop.reason == StopAborted {
		rec := audit.Record{Type: audit.Abort, Reason: "aborted"}
		if stop.err != nil {
			rec.Reason = stop.err.Error()
		}
		if f := r.inflight; f != nil {
			rec.Step, rec.CallID, rec.Tool, rec.Key = f.Step, f.CallID, f.Tool, f.Key
		}
		_ = r.record(rec) // the stop record below reports a failed log
	}
	used := r.meter.Used()
	r.res.Stop = stop.reason
	r.res.Err = stop.err
	r.res.Steps, r.res.ToolCalls = used.Steps, used.ToolCalls
	r.res.Usage, r.res.Tokens, r.res.CostUSD = used.Usage, used.Tokens, used.CostUSD
	r.res.Messages = r.msgs
	r.res.Answered = r.answered
	if stop.reason == StopDone {
		r.res.Answer = r.answer
	}
	rec := audit.ClipText(audit.Record{Type: audit.Stop, Stop: stop.reason,
		Steps: used.Steps, ToolCalls: used.ToolCalls, Tokens: used.Tokens}, r.l.cfg.ClipResults, r.res.Answer)
	if stop.err != nil {
		rec.Error = stop.err.Error()
	}
	if s := r.record(rec); s != nil && r.res.Err == nil {
		// The run ended well but its last record was lost: say so.
		r.res.Stop, r.res.Err = StopError, fmt.Errorf("record the stop: %w", s.err)
	}
	return r.res
}

func callNames(calls []*model.ToolCall) []string {
	if len(calls) == 0 {
		return nil
	}
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return names
}

// safeArgs returns args as they can be embedded in a JSON record: valid JSON
// as it is, anything else as a JSON string holding the text.
func safeArgs(args json.RawMessage) json.RawMessage {
	if json.Valid(args) {
		return args
	}
	b, _ := json.Marshal(string(args)) // marshalling a string cannot fail
	return b
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// changes asks the tool which files a call will change, turning a panic
// into an error: the call then does not run, as when a file cannot be
// saved.
func changes(ch tool.Changer, args json.RawMessage) (paths []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			paths, err = nil, fmt.Errorf("the tool could not say which files it changes (it crashed: %v)", p)
		}
	}()
	return ch.Changes(args)
}
