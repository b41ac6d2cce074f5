package guarded

import (
	"context"
	"encoding/json"

	"github.com/reinhq/rein/agent/stop"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
)

// Events are typed callbacks on what a session does, called in order on
// the session's goroutine as each step is recorded in the audit log (so
// what they see is what the log holds: redacted). Any may be nil. They
// must return quickly; they cannot change a decision.
type Events struct {
	// ModelText is the model's text of one step, and the tools it asked for.
	ModelText func(step int, text string, calls []string)
	// Verdict is the pipeline's decision on one proposed call: which gate
	// decided ("pipeline" when every gate allowed it), allow or deny, why.
	Verdict func(Verdict)
	// ApprovalAsked is a gate asking a human about a call; ApprovalAnswered
	// is the approver's answer (false also for an error).
	ApprovalAsked    func(approve.Request)
	ApprovalAnswered func(req approve.Request, yes bool)
	// Result is what one call that ran returned to the model (a call the
	// gates refused has only its Verdict).
	Result func(ToolResult)
	// Stop is the session's end: its stop reason and answer.
	Stop func(reason stop.Reason, answer string)
}

// Verdict is the decision on one proposed call.
type Verdict struct {
	Step     int
	CallID   string
	Tool     string
	Args     json.RawMessage
	Decision gate.Decision // gate.Allow or gate.Deny (an Ask is resolved before it is recorded)
	Gate     string
	Reason   string
}

// ToolResult is what one call returned to the model.
type ToolResult struct {
	Step    int
	CallID  string
	Tool    string
	Content string
	IsError bool
	// Refused is a result in rein's words: the tool did not run.
	Refused bool
	// Source is where the content came from, as its tool said.
	Source model.Source
}

// observer turns audit records into e's callbacks, then calls next.
func (e *Events) observer(next func(audit.Record)) func(audit.Record) {
	if e == nil {
		return next
	}
	return func(r audit.Record) {
		switch r.Type {
		case audit.ModelCall:
			if e.ModelText != nil {
				e.ModelText(r.Step, r.Text, r.Calls)
			}
		case audit.Verdict:
			if e.Verdict != nil {
				e.Verdict(Verdict{Step: r.Step, CallID: r.CallID, Tool: r.Tool, Args: r.Args, Decision: decisionOf(r.Decision), Gate: r.Gate, Reason: r.Reason})
			}
		case audit.Result:
			if e.Result != nil {
				e.Result(ToolResult{Step: r.Step, CallID: r.CallID, Tool: r.Tool, Content: r.Content, IsError: r.IsError, Refused: r.Refused, Source: r.Source})
			}
		case audit.Stop:
			if e.Stop != nil {
				e.Stop(r.Stop, r.Answer)
			}
		}
		if next != nil {
			next(r)
		}
	}
}

// decisionOf is a verdict record's decision; a record without one (which
// the writer never makes) reads as Deny, the fail-closed value.
func decisionOf(d audit.Decision) gate.Decision {
	v, _ := d.Get()
	return v
}

// watched is an approver that tells Events of each ask and answer.
type watched struct {
	approve.Approver
	e *Events
}

// watchedChooser is watched over an approver that can answer for more than
// one call (approve.Chooser), which it stays.
type watchedChooser struct {
	watched
	c approve.Chooser
}

func (w watchedChooser) Choose(ctx context.Context, req approve.Request) (approve.Answer, error) {
	if w.e.ApprovalAsked != nil {
		w.e.ApprovalAsked(req)
	}
	ans, err := w.c.Choose(ctx, req)
	if w.e.ApprovalAnswered != nil {
		w.e.ApprovalAnswered(req, ans.Yes && err == nil)
	}
	return ans, err
}

func (w watched) Approve(ctx context.Context, req approve.Request) (bool, error) {
	if w.e.ApprovalAsked != nil {
		w.e.ApprovalAsked(req)
	}
	yes, err := w.Approver.Approve(ctx, req)
	if w.e.ApprovalAnswered != nil {
		w.e.ApprovalAnswered(req, yes && err == nil)
	}
	return yes, err
}
