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

	// Denied ends a computer-use run in which a human said no to an
	// irreversible action (computer.StopDenied). The agent loop never
	// stops for it; it is known here so that those runs' logs read back.
	Denied Reason = "denied"
)

// Reasons are all the reasons, in the order above.
func Reasons() []Reason { return []Reason{Done, MaxSteps, Budget, Timeout, Aborted, Error, Denied} }

// Valid reports whether r is one of the reasons.
func (r Reason) Valid() bool {
	switch r {
	case Done, MaxSteps, Budget, Timeout, Aborted, Error, Denied:
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

// UnmarshalText reads a reason's name; "" is the zero Reason. Any other
// text is refused.
func (r *Reason) UnmarshalText(b []byte) error {
	v := Reason(b)
	if v != "" && !v.Valid() {
		return fmt.Errorf("stop reason %q: %w", b, ErrUnknown)
	}
	*r = v
	return nil
}

// ErrUnknown is wrapped by the error for a text that names no reason.
var ErrUnknown = errors.New("not a stop reason (want done, max_steps, budget, timeout, aborted, error or denied)")
