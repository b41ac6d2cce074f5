// Package stop names why a run of the agent loop ended. It is a leaf, so
// that the loop (agent, which calls the type agent.StopReason) and what
// reads a run back (the audit log, resume, the eval) share one enumeration
// and compare typed values, never text.
//
// A Reason's text form is what the audit log and the JSON of a run's result
// hold; reading a text that names no reason fails, because an unknown reason
// in a log is damage, not something to guess at.
package stop

import (
	"errors"
	"fmt"
)

// Reason is why a run ended. Every run ends with exactly one; the zero
// value, "", is no reason (a record that is not a stop).
type Reason string

// The reasons.
const (
	Done     Reason = "done"      // the model asked for no tool
	MaxSteps Reason = "max_steps" // the step cap was reached
	Budget   Reason = "budget"    // the token, cost or tool-call cap was exceeded
	Timeout  Reason = "timeout"   // the wall-time cap passed
	Aborted  Reason = "aborted"   // the caller's context was cancelled
	Error    Reason = "error"     // the model failed, or the audit log could not be written
)

// legacyDenied is the stop of a computer-use run, before computer use ran
// in the one loop, in which a human said no to an irreversible action.
// Nothing writes it any more; it reads back so that those logs verify.
const legacyDenied Reason = "denied"

// Reasons are all the reasons, in the order above.
func Reasons() []Reason { return []Reason{Done, MaxSteps, Budget, Timeout, Aborted, Error} }

// Valid reports whether r is one of the reasons.
func (r Reason) Valid() bool {
	switch r {
	case Done, MaxSteps, Budget, Timeout, Aborted, Error:
		return true
	}
	return false
}

// MarshalText writes the reason's name; the zero Reason writes nothing.
// Any other text is refused.
func (r Reason) MarshalText() ([]byte, error) {
	if r != "" && !r.Valid() {
		return nil, fmt.Errorf("stop reason %q: %w", string(r), ErrUnknown)
	}
	return []byte(r), nil
}

// UnmarshalText reads a reason's name; "" is the zero Reason. It also reads
// "denied", which computer-use logs written before the one loop hold (never
// written now: MarshalText refuses it). Any other text is refused.
func (r *Reason) UnmarshalText(b []byte) error {
	v := Reason(b)
	if v != "" && !v.Valid() && v != legacyDenied {
		return fmt.Errorf("stop reason %q: %w", b, ErrUnknown)
	}
	*r = v
	return nil
}

// ErrUnknown is wrapped by the error for a text that names no reason.
var ErrUnknown = errors.New("not a stop reason (want done, max_steps, budget, timeout, aborted, or error)")
