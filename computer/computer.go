// Package computer is computer use under rein's guards, in the one agent
// loop (agent.Loop): the actions — click(x,y), type(text), scroll(dy),
// key(name), wait() — are tools of a Screen, each returning what rein
// observed and a new screenshot as an image; the screen policy is a gate of
// the pipeline; the model ends the task by answering without an action,
// its answer the summary. The hard parts are not the actions but what
// surrounds them:
//
//   - Irreversibility is decided by rein, not by the model's label. Before a
//     click, rein asks the environment which element is under (x, y) and
//     classes the click irreversible when that element's accessible name,
//     text or value, or its form's action, means pay, buy, order, confirm,
//     send, submit, delete, remove, publish or transfer (a configurable,
//     multilingual word list, see Words). Enter in a form whose submit is
//     irreversible counts too. The class is the call's effect
//     (tool.Effector), so the confirm gate, the per-run limit, the intent
//     record and the idempotency key all see it. An irreversible action
//     needs a human's yes, asked by the pipeline; a no is an ordinary
//     approval refusal that tells the model to end the task.
//   - Typing into a password field is refused unless configured.
//   - Everything on screen is untrusted data. The system instructions say so
//     and travel apart from the screenshots; page content can make an action
//     stricter to judge (a button that says Delete) but never allows one.
//   - No-effect detection: every screenshot is hashed (its pixels, not its
//     PNG bytes); an action that leaves the screen unchanged is reported to
//     the model as having had no effect, and a later action that changes the
//     screen counts as a recovery.
//   - Budget, the kill switch and the audit log are the agent loop's.
//
// The environment is an Env: computer/browser implements it over headless
// Chromium with a domain allowlist. This package starts no browser itself
// and talks to no provider; the model is a model.Model that calls the
// action tools (computer/anthropic over Anthropic's computer-use tool, or
// Scripted for offline runs). New wires a Session; Screen's Tools, Gate
// and Attach are the parts, for a pipeline of one's own.
package computer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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
	// Done is a script's last step (Scripted): the model ends its turn
	// with the summary as its answer. It is not a tool.
	Done Kind = "done"
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
	// Href is the absolute URL of the link the element is in, if any.
	Href string `json:"href,omitempty"`
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

// Allower is implemented by an Env with a network allowlist
// (computer/browser): the screen gate refuses a click on a link to an
// http(s) URL it would block, before the click. The Env still blocks every
// request itself; this makes a link off the allowlist a refusal the model
// is told about, not a page that fails to load.
type Allower interface {
	AllowsURL(raw string) bool
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

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return b
}
