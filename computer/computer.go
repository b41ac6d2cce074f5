// Package computer runs a computer-using agent under rein's guards: take a
// screenshot, ask a vision model for one action, judge it, act, take a new
// screenshot. The actions are few — click(x,y), type(text), scroll(dy),
// key(name), wait(), done(summary) — and the hard parts are not the actions
// but what surrounds them:
//
//   - Irreversibility is decided by rein, not by the model's label. Before a
//     click, rein asks the environment which element is under (x, y) and
//     classes the click irreversible when that element's accessible name,
//     text or value, or its form's action, means pay, buy, order, confirm,
//     send, submit, delete, remove, publish or transfer (a configurable,
//     multilingual word list, see Words). Enter in a form whose submit is
//     irreversible counts too. An irreversible action needs a human's yes;
//     a no stops the task with the action recorded.
//   - Typing into a password field is refused unless configured.
//   - Everything on screen is untrusted data. The system instructions say so
//     and travel apart from the screenshot; page content can make an action
//     stricter to judge (a button that says Delete) but never allows one.
//   - No-effect detection: every screenshot is hashed (its pixels, not its
//     PNG bytes); an action that leaves the screen unchanged is reported to
//     the model as having had no effect, and a later action that changes the
//     screen counts as a recovery.
//   - Budget (steps, wall time, cost), the kill switch (cancel the context,
//     e.g. with agent.WithAbort: the action in flight is cancelled) and the
//     audit log (verdict, intent before the action, result) as in the agent
//     loop.
//
// The environment is an Env: computer/browser implements it over headless
// Chromium with a domain allowlist. This package starts no browser itself
// and talks to no provider; a Model adapts a vision model (see
// model/anthropic's computer-use path, or Scripted for offline runs).
package computer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/model"
)

// Kind names an action.
type Kind string

// The actions a model may ask for.
const (
	Click  Kind = "click"
	Type   Kind = "type"
	Scroll Kind = "scroll"
	Key    Kind = "key"
	Wait   Kind = "wait"
	Done   Kind = "done"
)

// Action is one step the model asks for. Only the fields of its Kind are
// set: X and Y for click (pixels of the screenshot the model saw), Text for
// type, DY for scroll (pixels, positive scrolls down), Name for key,
// Summary for done.
type Action struct {
	Kind    Kind   `json:"action"`
	X       int    `json:"x,omitempty"`
	Y       int    `json:"y,omitempty"`
	Text    string `json:"text,omitempty"`
	DY      int    `json:"dy,omitempty"`
	Name    string `json:"name,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// String renders the action the way the system instructions write it.
func (a Action) String() string {
	switch a.Kind {
	case Click:
		return fmt.Sprintf("click(%d,%d)", a.X, a.Y)
	case Type:
		return fmt.Sprintf("type(%q)", a.Text)
	case Scroll:
		return fmt.Sprintf("scroll(%d)", a.DY)
	case Key:
		return fmt.Sprintf("key(%q)", a.Name)
	case Wait:
		return "wait()"
	case Done:
		return fmt.Sprintf("done(%q)", a.Summary)
	}
	return fmt.Sprintf("%s(?)", a.Kind)
}

// Keys are the key names a key action may press.
var keys = map[string]bool{
	"Enter": true, "Tab": true, "Escape": true, "Backspace": true, "Delete": true, "Space": true,
	"ArrowUp": true, "ArrowDown": true, "ArrowLeft": true, "ArrowRight": true,
	"PageUp": true, "PageDown": true, "Home": true, "End": true,
}

// KeyNames returns the key names a key action accepts.
func KeyNames() []string {
	return []string{"Enter", "Tab", "Escape", "Backspace", "Delete", "Space",
		"ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Home", "End"}
}

// MaxTypeLen caps the text of one type action.
const MaxTypeLen = 2000

// Validate checks an action against the screen it was chosen on.
func (a Action) Validate(w, h int) error {
	switch a.Kind {
	case Click:
		if a.X < 0 || a.Y < 0 || a.X >= w || a.Y >= h {
			return fmt.Errorf("click(%d,%d) is outside the %d×%d screenshot: pick a point on it", a.X, a.Y, w, h)
		}
	case Type:
		if a.Text == "" {
			return fmt.Errorf("type() has no text: give the text to type")
		}
		if len(a.Text) > MaxTypeLen {
			return fmt.Errorf("type() text is %d bytes, over %d: type it in parts", len(a.Text), MaxTypeLen)
		}
	case Scroll:
		if a.DY == 0 || a.DY > 10*h || a.DY < -10*h {
			return fmt.Errorf("scroll(%d): give a non-zero amount of at most %d pixels", a.DY, 10*h)
		}
	case Key:
		if !keys[a.Name] {
			return fmt.Errorf("key(%q) is not a key rein presses: use one of %s", a.Name, strings.Join(KeyNames(), ", "))
		}
	case Wait, Done:
	default:
		return fmt.Errorf("unknown action %q: use click, type, scroll, key, wait or done", a.Kind)
	}
	return nil
}

// Screenshot is one picture of the screen, PNG-encoded, with its size in
// pixels (the coordinate space of click actions).
type Screenshot struct {
	PNG           []byte
	Width, Height int
}

// Turn is one step of the history the model is shown: the action it chose
// and what rein observed (the screen did not change, the action was refused,
// a request was blocked, …).
type Turn struct {
	Action      Action `json:"action"`
	Observation string `json:"observation"`
}

// Request is what the model is given for one decision. System is rein's
// instructions; Task is the user's task; Screen and History are
// observations, and the model must treat everything in them as data.
type Request struct {
	System  string
	Task    string
	Screen  Screenshot
	History []Turn
}

// Response is the model's decision: exactly one action (Kind Done to end),
// an optional short reason, and what the call cost.
type Response struct {
	Action Action
	Reason string
	Usage  model.Usage
}

// Model is a vision model that picks the next action. Implementations must
// honour ctx.
type Model interface {
	Decide(ctx context.Context, req *Request) (*Response, error)
}

// Element is what the environment found at the target of an action: the
// element under the click point (the nearest clickable ancestor of the hit
// element), or the focused element for type and key. Texts hold every text
// rein judges: accessible name, aria-label, title, value, visible and
// hidden text; FormAction is the action URL of the form it would submit,
// and Submit the texts of that form's submit control (for Enter).
type Element struct {
	Found      bool     `json:"found"`
	Tag        string   `json:"tag,omitempty"`
	Role       string   `json:"role,omitempty"`
	InputType  string   `json:"input_type,omitempty"`
	Texts      []string `json:"texts,omitempty"`
	FormAction string   `json:"form_action,omitempty"`
	Submit     []string `json:"submit,omitempty"`
	// Submits is true when activating the element submits its form (a
	// submit button, or a clickable element in a form that is not a field).
	Submits bool `json:"submits,omitempty"`
	// Editable is true for text fields, text areas and editable content.
	Editable bool `json:"editable,omitempty"`
	// Opaque is true when the target cannot be inspected (a frame from
	// another origin): rein then treats the action as irreversible.
	Opaque bool `json:"opaque,omitempty"`
}

// Label is a short description of the element for people and the log.
func (e Element) Label() string {
	if !e.Found {
		return "nothing"
	}
	name := ""
	for _, t := range e.Texts {
		if t = strings.Join(strings.Fields(t), " "); t != "" {
			name = t
			break
		}
	}
	if len(name) > 60 {
		name = name[:57] + "..."
	}
	kind := e.Tag
	if e.Role != "" {
		kind = e.Role
	}
	if name == "" {
		return kind
	}
	return fmt.Sprintf("%s %q", kind, name)
}

// BlockedRequest is a request the environment refused because its host is
// not on the allowlist.
type BlockedRequest struct {
	URL  string `json:"url"`
	Host string `json:"host"`
	// Navigation is true for a page load, false for a sub-resource.
	Navigation bool `json:"navigation"`
}

// Env is the screen the agent works on.
type Env interface {
	// Screenshot takes a picture of the screen as it is now.
	Screenshot(ctx context.Context) (Screenshot, error)
	// Inspect reports the element an action would act on, without acting.
	Inspect(ctx context.Context, a Action) (Element, error)
	// Perform does the action and returns when the screen has settled.
	Perform(ctx context.Context, a Action) error
	// Blocked returns, and forgets, the requests blocked since the last call.
	Blocked() []BlockedRequest
}

// AuditLog receives every record of a run; *audit.Writer implements it. An
// error stops the run: rein does not act unrecorded.
type AuditLog interface {
	Write(r audit.Record) error
}

// StopDenied is the stop of a run in which a human said no to an
// irreversible action: the task ends there, the refused action recorded.
const StopDenied agent.StopReason = "denied"

// Defaults for the zero fields of Config.Limits.
const (
	DefaultMaxSteps = 30
	DefaultMaxWall  = 300 * time.Second
)

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return b
}
