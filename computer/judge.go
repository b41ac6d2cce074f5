package computer

import (
	"fmt"

	"github.com/reinhq/rein/gate"
)

// GateNetwork is the gate of the verdict records of requests the
// environment blocked (off the allowlist).
const GateNetwork = "network"

// Declined is what the model is told when a human says no to an
// irreversible action: the task ends there.
const Declined = "The user declined this action. Do not try it or a way around it; end the task now and say what was not done."

// Policy is what rein allows on screen. It is set by whoever starts the
// session; nothing on the page can change it.
type Policy struct {
	// Words make an action irreversible; see DefaultWords.
	Words Words
	// AllowPasswords lets type() write into password fields.
	AllowPasswords bool
	// Off turns the irreversibility and password checks off. Only the
	// evaluation's unguarded baseline sets it, to measure the harm they
	// prevent.
	Off bool
}

// Judge decides one action on the element it would act on: Allow, Ask (an
// irreversible action: a human must say yes) or Deny (a password field).
// The verdicts are the screen gate's.
func (p Policy) Judge(a Action, el Element) gate.Verdict {
	allow := gate.Verdict{Decision: gate.Allow, Gate: GateScreen, Reason: "reversible: " + a.String() + " on " + el.Label()}
	if p.Off {
		allow.Reason = "guards off"
		return allow
	}
	switch a.Kind {
	case Click:
		if el.Opaque {
			return ask(a, el, "the target cannot be inspected (a frame from another origin), so rein cannot tell what the click does")
		}
		if w, ok := p.Words.Match(el.Texts...); ok {
			return ask(a, el, fmt.Sprintf("the element says %q", w))
		}
		if el.Submits {
			if w, ok := p.Words.Match(el.FormAction); ok {
				return ask(a, el, fmt.Sprintf("it submits a form whose action says %q", w))
			}
		}
	case Key:
		if a.Name != "Enter" && a.Name != "Space" {
			return allow
		}
		if el.Opaque {
			return ask(a, el, "the focused element cannot be inspected")
		}
		if !el.Editable {
			// Enter or Space on a focused button or link activates it, like a click.
			if w, ok := p.Words.Match(el.Texts...); ok {
				return ask(a, el, fmt.Sprintf("it activates an element that says %q", w))
			}
		}
		if a.Name == "Enter" && (el.Editable || el.Submits) {
			if w, ok := p.Words.Match(el.FormAction); ok {
				return ask(a, el, fmt.Sprintf("it submits a form whose action says %q", w))
			}
			if w, ok := p.Words.Match(el.Submit...); ok {
				return ask(a, el, fmt.Sprintf("it submits a form whose submit control says %q", w))
			}
		}
	case Type:
		if el.InputType == "password" && !p.AllowPasswords {
			return gate.Verdict{Decision: gate.Deny, Gate: GateScreen,
				Reason: "typing into a password field is not allowed in this session",
				Hint:   "Typing into password fields is not allowed here. Do not try to sign in; end the task and say what you could not do."}
		}
	}
	return allow
}

func ask(a Action, el Element, why string) gate.Verdict {
	return gate.Verdict{Decision: gate.Ask, Gate: GateScreen,
		Reason:   fmt.Sprintf("irreversible: %s on %s: %s", a.String(), el.Label(), why),
		Declined: Declined}
}
