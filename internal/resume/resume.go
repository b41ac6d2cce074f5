// Package resume reads an interrupted session's audit log and says where it
// stood: the conversation as the log tells it, what the session spent, and
// the calls whose outcome is unknown because rein stopped between their
// intent and their result. It decides nothing about those calls; the
// command asks a human, or refuses.
package resume

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/intake"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// ErrFinished is returned for a session that ended on its own.
var ErrFinished = errors.New("the session ended normally: there is nothing to resume")

// Unfinished is a call of the last response with no result: allowed, and
// then either interrupted before its intent was written (it did not run),
// or after (Started: it may or may not have taken effect).
type Unfinished struct {
	Call *model.ToolCall
	// Started says its intent was recorded: the tool may have run.
	Started bool
	// Effect is its tool's effect class, as the intent recorded it (when
	// Started); an intent that recorded none is taken as irreversible
	// (fail closed).
	Effect tool.Effect
	Key    string // its idempotency key
}

// Irreversible reports whether running it again could repeat an effect
// nobody can take back (an email, a payment): it may have run, and its
// effect is irreversible. Any other unfinished call may run again, through
// the gates.
func (u Unfinished) Irreversible() bool { return u.Started && u.Effect == tool.Irreversible }

// Point is where a session stood.
type Point struct {
	Session string
	Task    string
	Config  json.RawMessage // the session_start record's config
	// Start is the session_start record's config, read: what the session
	// was run with (its system prompt, tools, gates), so that it goes on
	// with the same.
	Start Start
	Stop  agent.StopReason // the stop reason, when the log has one
	// State is ready for agent.Loop.Resume except for the unfinished
	// calls, which the caller settles: add each to State.Pending (run it
	// again) or State.Settled (a human says what happened). It is Raw: the
	// task and the results as the log keeps them, for the loop to admit
	// (wrap, tell the Provenance) as it did the first time.
	State agent.State
	// Unjudged counts calls of the last response that never reached the
	// gates: nothing of theirs ran, and the log has no arguments for them,
	// so they are left out of the conversation.
	Unjudged   int
	Unfinished []Unfinished
	ModelCalls int
	// Goals are the user's messages after the task, in order, when the
	// session is a conversation (rein chat): each began a turn, and the
	// log keeps it in that turn's resume record.
	Goals []string
	// Ended says why the last turn ended early, as a live conversation
	// tells the model at its next turn: its stop and error, or that rein
	// stopped in the middle of it; "" when it ended done.
	Ended string
}

// Finished reports whether the session's last turn ended on its own
// (done): a run has nothing to resume, while a conversation can go on
// with a new message (rein chat --resume).
func (p *Point) Finished() bool { return p.Stop == agent.StopDone }

// Start is what a session_start record's config says (agent's startConfig).
type Start struct {
	Model  string          `json:"model,omitempty"`
	Tools  []string        `json:"tools"`
	Gates  []string        `json:"gates"`
	System string          `json:"system,omitempty"`
	Meta   json.RawMessage `json:"meta,omitempty"`
}

// Wrapper returns the intake wrapper the session's conversation was wrapped
// with: its per-session boundary, from the start record's meta
// ("intake_boundary"), so that a resumed conversation is wrapped with the
// same unforgeable tags. A log from before boundaries has none, and the
// resumed session wraps with a new one.
func (p *Point) Wrapper() (intake.Wrapper, error) {
	var m struct {
		Boundary string `json:"intake_boundary"`
	}
	if len(p.Start.Meta) > 0 {
		if err := json.Unmarshal(p.Start.Meta, &m); err != nil {
			return intake.Wrapper{}, fmt.Errorf("session %s: its start record's meta: %w", p.Session, err)
		}
	}
	return intake.Wrapper{Boundary: m.Boundary}, nil
}

// response is the last model response while its calls are answered.
type response struct {
	msg     *model.Message
	calls   []*model.ToolCall // in order, one per call id, as the verdicts name them
	results map[string]model.ToolResult
	intents map[string]audit.Record
}

// Read reconstructs the point a log reached. recs is the whole log, in order.
// It returns ErrFinished, with the point, for a session whose last turn
// ended done.
//
// A conversation's later messages (a resume record with a Task) are put
// where the live conversation put them (agent.NextTurn), each wrapped as
// the user's input with the session's boundary.
//
// A call run again by an earlier resume (its verdict, intent and result
// repeated under the same call id) is one call: it appears once in the
// conversation, answered by its last outcome, and counts once.
func Read(recs []audit.Record) (*Point, error) {
	if len(recs) == 0 || recs[0].Type != audit.SessionStart {
		return nil, errors.New("the log does not start with a session_start record")
	}
	p := &Point{Session: recs[0].Session, Task: recs[0].Task, Config: recs[0].Config}
	if len(p.Config) > 0 {
		if err := json.Unmarshal(p.Config, &p.Start); err != nil {
			return nil, fmt.Errorf("the session_start record's config: %w", err)
		}
	}
	wrap, err := p.Wrapper()
	if err != nil {
		return nil, err
	}
	msgs := []model.Message{{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock(p.Task)}}}
	var (
		cur     *response
		used    = p.State.Used
		stopped *audit.Record // the stop record of the turn in the log, nil while it runs
	)
	flush := func() {
		if cur == nil {
			return
		}
		msgs = append(msgs, *cur.msg)
		blocks := make([]model.Block, 0, len(cur.calls))
		for _, c := range cur.calls {
			if r, ok := cur.results[c.ID]; ok {
				blocks = append(blocks, model.ResultBlock(r))
			}
		}
		if len(blocks) > 0 {
			msgs = append(msgs, model.Message{Role: model.RoleUser, Blocks: blocks})
		}
		cur = nil
	}
	for _, r := range recs[1:] {
		switch r.Type {
		case audit.ModelCall:
			if r.Error != "" {
				used.Steps++ // a failed call said nothing, and counted as a step, as the live meter counts it
				continue
			}
			flush()
			p.ModelCalls++
			used.Steps++
			if r.Usage != nil {
				used.Usage = used.Usage.Add(*r.Usage)
			}
			cur = &response{msg: &model.Message{Role: model.RoleAssistant},
				results: map[string]model.ToolResult{}, intents: map[string]audit.Record{}}
			if r.Text != "" {
				cur.msg.Blocks = append(cur.msg.Blocks, model.TextBlock(r.Text))
			}
		case audit.Verdict:
			if r.CallID == "" {
				if cur != nil && len(cur.calls) == 0 {
					// The token or cost cap refused the response before any
					// of its calls: it never entered the conversation.
					cur = nil
				}
				continue
			}
			if cur == nil {
				continue
			}
			c := cur.call(r)
			if c == nil { // the first verdict of this call: a new call
				if r.Gate != gate.NameBudget { // refused by the tool-call cap: never counted
					used.ToolCalls++
				}
				c = &model.ToolCall{ID: r.CallID, Name: r.Tool, Args: r.Args}
				cur.calls = append(cur.calls, c)
				cur.msg.Blocks = append(cur.msg.Blocks, model.Block{Kind: model.KindToolCall, Call: c})
			}
			// Judged again (a resume ran it again): what happened before
			// is replaced by what happens now.
			delete(cur.results, c.ID)
			delete(cur.intents, c.ID)
			if !r.Decision.Is(gate.Allow) { // a verdict without a decision refuses too
				cur.results[c.ID] = refusal(r)
			}
		case audit.Intent:
			if cur != nil {
				cur.intents[r.CallID] = r
			}
		case audit.Result:
			if cur != nil {
				cur.results[r.CallID] = result(r)
			}
		case audit.Resume:
			if r.Task == "" {
				p.Stop, stopped = "", nil // rein resume went on with the same turn
				continue
			}
			// The user's next message: a new turn.
			var settled []model.ToolResult
			if cur != nil && len(cur.msg.Blocks) > 0 {
				msgs = append(msgs, *cur.msg)
				for _, c := range cur.calls {
					if res, ok := cur.results[c.ID]; ok {
						settled = append(settled, res)
					}
				}
				cur = nil
			}
			msgs = agent.NextTurn(msgs, settled, turnEnd(stopped), wrap.Task(r.Task))
			p.Goals = append(p.Goals, r.Task)
			p.Stop, stopped = "", nil
			// What the turn began with, as counted here (a model call
			// aborted in flight left no record: counting the record's own
			// figures would let the turn run past its caps).
			p.State.TurnBegan = &budget.Used{Steps: used.Steps, ToolCalls: used.ToolCalls}
		case audit.Stop:
			p.Stop, stopped = r.Stop, &r
		}
	}
	p.Ended = turnEnd(stopped)
	// The last response: its answered calls are settled; the others are
	// unfinished (an intent, no result) or unjudged (no verdict at all).
	if cur != nil {
		if len(cur.msg.Blocks) > 0 {
			msgs = append(msgs, *cur.msg)
		}
		want := len(recsCalls(recs))
		for _, c := range cur.calls {
			if res, ok := cur.results[c.ID]; ok {
				p.State.Settled = append(p.State.Settled, res)
				continue
			}
			u := Unfinished{Call: c}
			if in, ok := cur.intents[c.ID]; ok {
				effect, ok := in.Effect.Get()
				if !ok {
					effect = tool.Irreversible
				}
				u.Started, u.Effect, u.Key = true, effect, in.Key
			}
			p.Unfinished = append(p.Unfinished, u)
		}
		// Calls that never reached a verdict left no arguments in the log;
		// they are dropped from the response, and the model asks again.
		p.Unjudged = max(want-len(cur.calls), 0)
	}
	p.State.Messages = msgs
	p.State.Raw = true
	used.Tokens = used.Usage.Total()
	p.State.Used = used
	if p.Finished() {
		return p, ErrFinished
	}
	return p, nil
}

// turnEnd says why the turn whose stop record is stop ended early, as the
// live conversation said it (its stop, and its error); "" when it ended
// done. A turn with no stop record ended when rein stopped.
func turnEnd(stop *audit.Record) string {
	switch {
	case stop == nil:
		return "interrupted: rein stopped in the middle of it"
	case stop.Stop == agent.StopDone:
		return ""
	case stop.Error != "":
		return string(stop.Stop) + ": " + stop.Error
	}
	return string(stop.Stop)
}

// call returns the call of this response that verdict r judges, if an
// earlier verdict named it already.
func (cur *response) call(r audit.Record) *model.ToolCall {
	for _, c := range cur.calls {
		if c.ID == r.CallID {
			return c
		}
	}
	return nil
}

// refusal is the answer to a refused call, as the model read it: the
// verdict's content (what the loop told it), or, in a log from before
// verdicts kept it, the gate and its reason.
func refusal(r audit.Record) model.ToolResult {
	content := r.Content
	if content == "" {
		content = fmt.Sprintf("Refused by the %s gate: %s", r.Gate, r.Reason)
	}
	return model.ToolResult{CallID: r.CallID, Name: r.Tool, Content: content, IsError: true, Refused: true}
}

// result is a result record's answer. The log keeps at most the first
// ClipResults bytes of a result; when it kept less than the whole, the
// model is told so, and how to see the rest.
func result(r audit.Record) model.ToolResult {
	content := r.Content
	if r.Truncated {
		content += fmt.Sprintf("\n[cut: the session was resumed from its audit log, which keeps the first %d of this result's %d bytes (SHA-256 %s). Run the call again, or read in parts, to see the rest.]",
			len(r.Content), r.Bytes, r.SHA256)
	}
	return model.ToolResult{CallID: r.CallID, Name: r.Tool, Content: content, IsError: r.IsError, Refused: r.Refused, Source: r.Source}
}

// recsCalls returns the call names of the last model_call record.
func recsCalls(recs []audit.Record) []string {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Type == audit.ModelCall && recs[i].Error == "" {
			return recs[i].Calls
		}
	}
	return nil
}
