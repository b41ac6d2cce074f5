package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/audit"
)

// The kinds of event `rein run --json` prints, one JSON object per line,
// before the final object.
const (
	eventText     = "text"      // the model's text of one step
	eventToolCall = "tool_call" // a call the model asked for, with its arguments
	eventVerdict  = "verdict"   // what the gates (and the approver) decided about it
	eventResult   = "result"    // what the tool returned
	eventStop     = "stop"      // why the session ended
)

// event is one line of the --json stream. It is built from the audit
// record it follows, after redaction, so it shows nothing the log does not.
type event struct {
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
	Stop   agent.StopReason `json:"stop,omitempty"`
	Answer string           `json:"answer,omitempty"`
	Steps  int              `json:"steps,omitempty"`
	Tokens int64            `json:"tokens,omitempty"`
	Error  string           `json:"error,omitempty"`
}

// events returns the events an audit record stands for: a model call's text,
// a verdict's call and the verdict, a result, the stop. Bookkeeping records
// (session start, intent, abort, resume) stand for none: the audit log has them.
func events(r audit.Record) []event {
	base := event{Session: r.Session, Step: r.Step, CallID: r.CallID, Tool: r.Tool}
	switch r.Type {
	case audit.ModelCall:
		if r.Text == "" {
			return nil
		}
		e := base
		e.Type, e.Text, e.Truncated = eventText, r.Text, r.Truncated
		return []event{e}
	case audit.Verdict:
		v := base
		v.Type, v.Decision, v.Gate, v.Reason = eventVerdict, r.Decision, r.Gate, r.Reason
		if r.Tool == "" { // the budget stopped the step before any call
			return []event{v}
		}
		c := base
		c.Type, c.Args = eventToolCall, r.Args
		return []event{c, v}
	case audit.Result:
		e := base
		e.Type, e.Content, e.IsError, e.Truncated = eventResult, r.Content, r.IsError, r.Truncated
		return []event{e}
	case audit.Stop:
		// A clipped answer is marked; the final object carries it whole.
		return []event{{Type: eventStop, Session: r.Session, Stop: r.Stop, Answer: r.Answer, Truncated: r.Truncated, Steps: r.Steps, Tokens: r.Tokens, Error: r.Error}}
	}
	return nil
}

// eventWriter prints the events of each record as JSON lines. Stdout is
// best effort: the audit file is the record.
func eventWriter(w io.Writer) func(audit.Record) {
	enc := json.NewEncoder(safeJSON{w})
	return func(r audit.Record) {
		for _, e := range events(r) {
			_ = enc.Encode(e)
		}
	}
}

// safeJSON writes JSON text with every character a terminal would act on
// that encoding/json leaves raw (DEL, C1 controls, bidirectional controls)
// written as a \uXXXX escape: the same JSON value, safe to read on a
// terminal. Each Write must hold whole characters, as an Encoder's does;
// invalid UTF-8 cannot occur, since encoding/json replaces it.
type safeJSON struct{ w io.Writer }

func (s safeJSON) Write(p []byte) (int, error) {
	if !bytes.ContainsFunc(p, unsafeInJSON) {
		return s.w.Write(p)
	}
	var b bytes.Buffer
	for _, r := range string(p) {
		if unsafeInJSON(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	if _, err := s.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

func unsafeInJSON(r rune) bool {
	return (r >= 0x7f && r <= 0x9f) || unicode.Is(unicode.Bidi_Control, r)
}
