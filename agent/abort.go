package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
)

// ErrAborted is what every abort cause wraps.
var ErrAborted = errors.New("aborted")

// AbortError is the cause of a run's context when someone aborted it.
type AbortError struct{ Reason string }

func (e *AbortError) Error() string { return "aborted: " + e.Reason }

// Unwrap makes errors.Is(err, ErrAborted) true.
func (e *AbortError) Unwrap() error { return ErrAborted }

// WithAbort returns a context for Run and the function that aborts it. An
// abort stops the run at once: a model call or tool in flight is cancelled
// (a tool's whole process group is killed), the audit log gets an abort
// record with the reason and the call in flight, and the run ends with
// StopAborted. Calling abort again, or after the run, does nothing.
func WithAbort(parent context.Context) (ctx context.Context, abort func(reason string)) {
	ctx, cancel := context.WithCancelCause(parent)
	return ctx, func(reason string) { cancel(&AbortError{Reason: reason}) }
}

// IdempotencyKey is the key of a side-effecting call: the same session,
// call id, tool and arguments always give the same key, so that a resumed
// session can tell a call it already made from a new one.
func IdempotencyKey(session, callID, tool string, args json.RawMessage) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(session), []byte(callID), []byte(tool), args} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
