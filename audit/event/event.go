// Package event turns audit records into the events a client watches: the
// model's text, each call with its verdict, each result and the stop. It is
// the one shape of `rein run --json`'s stream and of `rein serve`'s
// Server-Sent Events. An event is built from the audit record it follows,
// after redaction, so it shows nothing the log does not hold.
//
// It only translates; it writes nothing and keeps no state.
package event

import (
	"encoding/json"

	"github.com/reinhq/rein/agent/stop"
	"github.com/reinhq/rein/audit"
)

// The kinds of event.
const (
	Text     = "text"      // the model's text of one step
	ToolCall = "tool_call" // a call the model asked for, with its arguments
	Verdict  = "verdict"   // what the gates (and the approver) decided about it
	Result   = "result"    // what the tool returned
	Stop     = "stop"      // why the session ended
)

// Event is one event of a session.
type Event struct {
	Type    string          `json:"type"`
	Session string          `json:"session"`
	Step    int             `json:"step,omitempty"`
	Text    string          `json:"text,omitempty"`
	CallID  string          `json:"call_id,omitempty"`
	Tool    string          `json:"tool,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	// verdict
	Decision audit.Decision `json:"decision,omitzero"`
	Gate     string         `json:"gate,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	// result
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// stop
	Stop   stop.Reason `json:"stop,omitempty"`
	Answer string      `json:"answer,omitempty"`
	Steps  int         `json:"steps,omitempty"`
	Tokens int64       `json:"tokens,omitempty"`
	Error  string      `json:"error,omitempty"`
}

// From returns the events an audit record stands for: a model call's text,
// a verdict's call and the verdict, a result, the stop. Bookkeeping records
// (session start, intent, abort, resume) stand for none: the audit log has
// them.
func From(r audit.Record) []Event {
	base := Event{Session: r.Session, Step: r.Step, CallID: r.CallID, Tool: r.Tool}
	switch r.Type {
	case audit.ModelCall:
		if r.Text == "" {
			return nil
		}
		e := base
		e.Type, e.Text, e.Truncated = Text, r.Text, r.Truncated
		return []Event{e}
	case audit.Verdict:
		v := base
		v.Type, v.Decision, v.Gate, v.Reason = Verdict, r.Decision, r.Gate, r.Reason
		if r.Tool == "" { // the budget stopped the step before any call
			return []Event{v}
		}
		c := base
		c.Type, c.Args = ToolCall, r.Args
		return []Event{c, v}
	case audit.Result:
		e := base
		e.Type, e.Content, e.IsError, e.Truncated = Result, r.Content, r.IsError, r.Truncated
		return []Event{e}
	case audit.Stop:
		// A clipped answer is marked; the final object carries it whole.
		return []Event{{Type: Stop, Session: r.Session, Stop: r.Stop, Answer: r.Answer, Truncated: r.Truncated, Steps: r.Steps, Tokens: r.Tokens, Error: r.Error}}
	}
	return nil
}
