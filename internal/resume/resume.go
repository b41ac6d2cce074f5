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
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// ErrFinished is returned for a session that ended on its own.
var ErrFinished = errors.New("the session ended normally: there is nothing to resume")

// Unfinished is a call whose intent was recorded and whose result was not:
// it may or may not have taken effect.
type Unfinished struct {
	Call   *model.ToolCall
	Effect string // "read-only", "reversible", "irreversible"
	Key    string // its idempotency key
}

// Irreversible reports whether running it again could repeat an effect
// nobody can take back (an email, a payment).
func (u Unfinished) Irreversible() bool { return u.Effect == tool.Irreversible.String() }

// Point is where a session stood.
type Point struct {
	Session string
	Task    string
	Config  json.RawMessage // the session_start record's config
	Stop    string          // the stop reason, when the log has one
	// State is ready for agent.Loop.Resume except for the unfinished
	// calls, which the caller settles: add each to State.Pending (run it
	// again) or State.Settled (a human says what happened).
	State agent.State
	// Unjudged counts calls of the last response that never reached the
	// gates: nothing of theirs ran, and the log has no arguments for them,
	// so they are left out of the conversation.
	Unjudged   int
	Unfinished []Unfinished
	ModelCalls int
}

// Read reconstructs the point a log reached. recs is the whole log, in order.
func Read(recs []audit.Record) (*Point, error) {
	if len(recs) == 0 || recs[0].Type != audit.SessionStart {
		return nil, errors.New("the log does not start with a session_start record")
	}
	p := &Point{Session: recs[0].Session, Task: recs[0].Task, Config: recs[0].Config}
	msgs := []model.Message{{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock(p.Task)}}}
	var (
		asst    *model.Message    // the last response, while its calls are answered
		calls   []*model.ToolCall // its calls, in order, as the verdicts name them
		results map[string]model.ToolResult
		intents map[string]audit.Record
		used    = p.State.Used
	)
	flush := func() {
		if asst == nil {
			return
		}
		msgs = append(msgs, *asst)
		blocks := make([]model.Block, 0, len(calls))
		for _, c := range calls {
			if r, ok := results[c.ID]; ok {
				blocks = append(blocks, model.ResultBlock(r))
			}
		}
		if len(blocks) > 0 {
			msgs = append(msgs, model.Message{Role: model.RoleUser, Blocks: blocks})
		}
		asst = nil
	}
	for _, r := range recs[1:] {
		switch r.Type {
		case audit.ModelCall:
			if r.Error != "" {
				continue // a failed call said nothing
			}
			flush()
			p.ModelCalls++
			used.Steps++
			if r.Usage != nil {
				used.Usage = used.Usage.Add(*r.Usage)
			}
			asst = &model.Message{Role: model.RoleAssistant}
			if r.Text != "" {
				asst.Blocks = append(asst.Blocks, model.TextBlock(r.Text))
			}
			calls, results, intents = nil, map[string]model.ToolResult{}, map[string]audit.Record{}
		case audit.Verdict:
			if r.CallID == "" || asst == nil {
				continue // a budget stop
			}
			used.ToolCalls++
			c := &model.ToolCall{ID: r.CallID, Name: r.Tool, Args: r.Args}
			calls = append(calls, c)
			asst.Blocks = append(asst.Blocks, model.Block{Kind: model.KindToolCall, Call: c})
			if r.Decision != "allow" {
				results[c.ID] = model.ToolResult{CallID: c.ID, Name: c.Name, IsError: true,
					Content: fmt.Sprintf("Refused by the %s gate.", r.Gate)}
			}
		case audit.Intent:
			if intents != nil {
				intents[r.CallID] = r
			}
		case audit.Result:
			if results != nil {
				results[r.CallID] = model.ToolResult{CallID: r.CallID, Name: r.Tool, Content: r.Content, IsError: r.IsError}
			}
		case audit.Stop:
			p.Stop = r.Stop
		}
	}
	if p.Stop == string(agent.StopDone) {
		return nil, ErrFinished
	}
	// The last response: its answered calls are settled; the others are
	// unfinished (an intent, no result) or unjudged (no verdict at all).
	if asst != nil {
		msgs = append(msgs, *asst)
		want := len(recsCalls(recs))
		for _, c := range calls {
			if res, ok := results[c.ID]; ok {
				p.State.Settled = append(p.State.Settled, res)
				continue
			}
			in := intents[c.ID]
			p.Unfinished = append(p.Unfinished, Unfinished{Call: c, Effect: in.Effect, Key: in.Key})
		}
		// Calls that never reached a verdict left no arguments in the log;
		// they are dropped from the response, and the model asks again.
		p.Unjudged = max(want-len(calls), 0)
	}
	p.State.Messages = msgs
	used.Tokens = used.Usage.Total()
	p.State.Used = used
	return p, nil
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
