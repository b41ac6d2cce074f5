// Package approve asks a human (or a stand-in for one) whether a tool call
// that needs a yes may run. The answer defaults to No: an approver that
// fails, times out or cannot reach anyone has said No.
//
// This package decides nothing about which calls need approval; the gates do.
package approve

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/tool"
)

// Request is what the approver is shown: the whole call, not just the tool's
// name, and the gate and reason that asked for a yes.
type Request struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Gate   string          `json:"gate"`
	Reason string          `json:"reason"`
	// Roles says what the tool's arguments name (tool.Spec.Roles), so an
	// approver can show the decisive ones (the command, the recipient, the
	// path) first. Nil when unknown.
	Roles map[string]tool.Role `json:"roles,omitempty"`
	// Pattern is exactly what a sticky answer to this request would cover
	// ("git status", "edit_file path=src/*.go"), shown to the human as it
	// is; a session or saved rule matches calls by it and nothing wider.
	// Empty when no sticky answer is offered: then only Once exists.
	Pattern string `json:"pattern,omitempty"`
	// Contract is the task contract in force, in the short text a person
	// reads in five seconds; when Gate is "contract" it is the contract (or
	// amendment) being proposed. Empty when the session has none.
	Contract string `json:"contract,omitempty"`
}

// Scope is how far a human's answer reaches.
type Scope int

const (
	// Once answers this call only.
	Once Scope = iota
	// Session answers every later call of this session that Pattern covers.
	Session
	// Always is Session and also saves the answer as a rule in the user's
	// own config (never the project's).
	Always
)

func (s Scope) String() string {
	switch s {
	case Once:
		return "once"
	case Session:
		return "session"
	case Always:
		return "always"
	}
	return "once"
}

// Answer is a human's decision and how far it reaches. The zero Answer is
// No, once.
type Answer struct {
	Yes   bool  `json:"yes"`
	Scope Scope `json:"scope"`
	// Pattern is the request's Pattern the answer covers when Scope is not
	// Once; a Chooser must not widen it.
	Pattern string `json:"pattern,omitempty"`
	// By says who answered and through which channel ("terminal",
	// "serve:web user@host", "mcp:elicitation", "rule:session"), for the
	// audit log. Empty when unknown.
	By string `json:"by,omitempty"`
}

// Chooser is an approver that can give answers that reach further than one
// call. An error counts as No, once.
type Chooser interface {
	Choose(ctx context.Context, req Request) (Answer, error)
}

// Choose asks a: through Choose when a is a Chooser, else through Approve,
// whose answer reaches this call only. An answer whose Pattern is not the
// request's is cut back to Once, so no approver can widen what it was shown.
func Choose(ctx context.Context, a Approver, req Request) (Answer, error) {
	if c, ok := a.(Chooser); ok {
		ans, err := c.Choose(ctx, req)
		if err != nil {
			return Answer{}, err
		}
		if ans.Scope != Once && (req.Pattern == "" || ans.Pattern != req.Pattern) {
			ans.Scope, ans.Pattern = Once, ""
		}
		return ans, nil
	}
	yes, err := a.Approve(ctx, req)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Yes: yes}, nil
}

// Approver says yes or no to a call. An error counts as No.
// Implementations must honour ctx and return when it is done.
type Approver interface {
	Approve(ctx context.Context, req Request) (bool, error)
}

// Asker puts a question from the model to the human on the approver's
// channel (ask_question). ErrNoAnswer, or any error, means there was no
// answer; implementations must honour ctx.
type Asker interface {
	Ask(ctx context.Context, question string) (string, error)
}

// ErrNoAnswer is returned by an Asker that has no one to ask.
var ErrNoAnswer = errors.New("no one answered")

// Unanswered is the Asker with no one behind it: every question goes
// unanswered. It is the default.
type Unanswered struct{}

// Ask returns ErrNoAnswer.
func (Unanswered) Ask(context.Context, string) (string, error) { return "", ErrNoAnswer }

// Deny says no to everything. It is the default approver.
type Deny struct{}

// Approve returns false.
func (Deny) Approve(context.Context, Request) (bool, error) { return false, nil }

// Func adapts a function to an Approver.
type Func func(ctx context.Context, req Request) (bool, error)

// Approve calls f.
func (f Func) Approve(ctx context.Context, req Request) (bool, error) { return f(ctx, req) }

// Fixed gives the same answer to every request. It stands in for a human in
// demos and tests; it is not offered as a setting of `rein run`.
type Fixed bool

// Approve returns the fixed answer.
func (a Fixed) Approve(context.Context, Request) (bool, error) { return bool(a), nil }

// Recorder wraps an approver and remembers every request it was shown.
type Recorder struct {
	Next Approver

	mu   sync.Mutex
	seen []Request
}

// Approve records req and asks the wrapped approver.
func (r *Recorder) Approve(ctx context.Context, req Request) (bool, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req)
	r.mu.Unlock()
	return r.Next.Approve(ctx, req)
}

// Requests returns the requests seen so far.
func (r *Recorder) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.seen...)
}

// Recipients is a standing approval given in advance: yes to calls whose
// argument Arg is an email address in one of Domains, no to everything else.
// It stands in for a human who said "replies to our own and our client's
// domains are fine"; a call it does not cover would need a real human.
type Recipients struct {
	Arg     string
	Domains []string
}

// Approve says yes when the call's address is in an allowed domain.
func (r Recipients) Approve(_ context.Context, req Request) (bool, error) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(req.Args, &args); err != nil {
		return false, nil
	}
	var addr string
	if err := json.Unmarshal(args[r.Arg], &addr); err != nil {
		return false, nil
	}
	at := strings.LastIndexByte(addr, '@')
	if at < 0 || strings.Count(addr, "@") != 1 {
		return false, nil
	}
	return slices.Contains(r.Domains, strings.ToLower(addr[at+1:])), nil
}
