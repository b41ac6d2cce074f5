package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/reinhq/rein/model/internal/wire"
)

// APIError is an error status the API answered with, after the SDK's
// retries. Its text says what happened and what to do; it never holds the
// API key. Unwrap gives the SDK's *anthropic.Error.
type APIError struct {
	StatusCode int    // the HTTP status
	Type       string // the API's error type, e.g. "rate_limit_error"; may be empty
	Message    string // the API's message, clipped; may be empty
	RequestID  string // the API's request id, for support; may be empty
	Tries      int    // how many attempts were made
	advice     string
	err        error
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "anthropic: the API answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Tries > 1 {
		fmt.Fprintf(&b, " (%d tries)", e.Tries)
	}
	if e.advice != "" {
		b.WriteString(": " + e.advice)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, "; it said: %q", e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request id " + e.RequestID + ")")
	}
	return b.String()
}

func (e *APIError) Unwrap() error { return e.err }

// maxMessage is how much of the API's error message an APIError keeps.
const maxMessage = 300

// callError turns the SDK's error into one that says what happened in words.
// sniff holds what the server last sent, if anything.
func (m *Model) callError(ctx context.Context, err error, tries int, sniff *wire.Sniffer) error {
	if ctx.Err() != nil {
		return fmt.Errorf("anthropic: call abandoned: %w", context.Cause(ctx))
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		msg := m.scrub(clip(apiErr.Message, maxMessage))
		if strings.TrimSpace(msg) == "" && sniff.Answered() {
			msg = "no API error in its body: " + m.scrub(sniff.Describe())
		}
		e := &APIError{
			StatusCode: apiErr.StatusCode,
			Type:       string(apiErr.Type()),
			Message:    msg,
			RequestID:  m.scrub(clip(apiErr.RequestID, 100)),
			Tries:      tries,
			advice:     advice(apiErr.StatusCode),
			err:        err,
		}
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: no answer within %s on any of %d tries: raise the LLM timeout or try later",
			ErrTimeout, m.timeout, max(tries, 1))
	}
	cause := m.scrub(wire.Sanitize(err.Error()))
	if sniff.Answered() {
		// The server answered, with something the SDK could not decode. The
		// SDK retries a body cut short (as a dropped connection) and not a
		// whole body that is not JSON; rein adds no retry of its own.
		what := m.scrub(sniff.Describe())
		if st := sniff.Status(); st >= 400 {
			return &APIError{StatusCode: st, Message: clip("not the API's error JSON: "+what, maxMessage),
				Tries: tries, advice: advice(st), err: err}
		}
		if sniff.Cut() {
			return fmt.Errorf("%w: the server at %s cut its answer short (the last of %d tries): %s (%s)",
				ErrBadResponse, m.base, max(tries, 1), what, cause)
		}
		return fmt.Errorf("%w: the server at %s answered with something that is not the Messages API's JSON: %s; "+
			"check that --base-url (or %s) is the API's root, such as https://api.anthropic.com/ (%s)",
			ErrBadResponse, m.base, what, EnvBaseURL, cause)
	}
	// Connection errors and the like; the SDK's text names the URL, not the key.
	return fmt.Errorf("%w: %s, after %d tries: %s; check the server is running there, or set --base-url (or %s)",
		ErrUnreachable, m.base, max(tries, 1), cause, EnvBaseURL)
}

// advice says what to do about a status.
func advice(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "check " + EnvAPIKey
	case status == http.StatusForbidden:
		return "the API key may not use this model or feature"
	case status == http.StatusNotFound:
		return "check the model name and the base URL"
	case status == http.StatusRequestEntityTooLarge:
		return "the conversation is too large for one request"
	case status == http.StatusTooManyRequests:
		return "rate limited: wait, or lower the request rate"
	case status == 529:
		return "the API is overloaded: try again later"
	case status >= 500:
		return "the API failed: try again later"
	case status == http.StatusBadRequest:
		return "the API rejected the request"
	}
	return ""
}

// scrub removes the API key from s, in case a server echoes it.
func (m *Model) scrub(s string) string {
	if m.key == "" {
		return s
	}
	return strings.ReplaceAll(s, m.key, "[redacted]")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
