package audit

import (
	"fmt"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

// Decision is a record's gate decision: a verdict's has one, every other
// record none (the zero value). It is kept apart from gate.Decision itself
// because gate.Decision's zero value is Deny: a record must tell "no
// decision" from "denied". In the log it is the decision's name, "allow",
// "ask" or "deny"; reading any other text fails, since an unknown decision
// in a log is damage.
type Decision struct {
	d   gate.Decision
	set bool
}

// DecisionOf is a record's decision d.
func DecisionOf(d gate.Decision) Decision { return Decision{d: d, set: true} }

// Get returns the decision and whether the record has one.
func (d Decision) Get() (gate.Decision, bool) { return d.d, d.set }

// Is reports whether the record has a decision and it is g.
func (d Decision) Is(g gate.Decision) bool { return d.set && d.d == g }

// IsZero reports a record with no decision (it is then left out of the log).
func (d Decision) IsZero() bool { return !d.set }

// String is the decision's name, or "" for none.
func (d Decision) String() string {
	if !d.set {
		return ""
	}
	return d.d.String()
}

// MarshalText writes the decision's name. No decision, or one that is not
// allow, ask or deny, is refused.
func (d Decision) MarshalText() ([]byte, error) {
	if !d.set {
		return nil, fmt.Errorf("audit: no decision to write")
	}
	switch d.d {
	case gate.Allow, gate.Ask, gate.Deny:
		return d.d.MarshalText()
	}
	return nil, fmt.Errorf("audit: %s is not a decision", d.d)
}

// UnmarshalText reads "allow", "ask" or "deny".
func (d *Decision) UnmarshalText(b []byte) error {
	var g gate.Decision
	if err := g.UnmarshalText(b); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	*d = DecisionOf(g)
	return nil
}

// Effect is a record's effect class: an intent's has one (the tool's),
// other records none (the zero value). It is kept apart from tool.Effect
// because tool.Effect's zero value is ReadOnly: a record must tell "no
// effect recorded" from "read-only". In the log it is the effect's name;
// reading any other text fails.
type Effect struct {
	e   tool.Effect
	set bool
}

// EffectOf is a record's effect e.
func EffectOf(e tool.Effect) Effect { return Effect{e: e, set: true} }

// Get returns the effect and whether the record has one.
func (e Effect) Get() (tool.Effect, bool) { return e.e, e.set }

// Is reports whether the record has an effect and it is x.
func (e Effect) Is(x tool.Effect) bool { return e.set && e.e == x }

// IsZero reports a record with no effect (it is then left out of the log).
func (e Effect) IsZero() bool { return !e.set }

// String is the effect's name, or "" for none.
func (e Effect) String() string {
	if !e.set {
		return ""
	}
	return e.e.String()
}

// MarshalText writes the effect's name. No effect, or an unknown one, is
// refused.
func (e Effect) MarshalText() ([]byte, error) {
	if !e.set {
		return nil, fmt.Errorf("audit: no effect to write")
	}
	b, err := e.e.MarshalText()
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return b, nil
}

// UnmarshalText reads "read-only", "reversible" or "irreversible".
func (e *Effect) UnmarshalText(b []byte) error {
	var x tool.Effect
	if err := x.UnmarshalText(b); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	*e = EffectOf(x)
	return nil
}
