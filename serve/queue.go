package serve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/budget"
)

// DefaultApprovalTimeout is how long a pending approval waits for an
// answer before it is No.
const DefaultApprovalTimeout = 5 * time.Minute

// Kinds of approval.
const (
	KindCall     = "call"     // a gate asks whether a tool call may run
	KindQuestion = "question" // the model asks the human (ask_question)
)

// Decisions a human can post.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
	DecisionAnswer  = "answer" // the reply to a question
)

// Approval is one question waiting for a human: the whole call, who asked
// and why, where the session stands, and when it becomes an automatic No.
type Approval struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	Kind    string `json:"kind"`
	// The call (KindCall): tool, every argument in full, the gate and
	// reason that asked, the sticky pattern offered, the effect class and
	// whether rein can undo it.
	Tool     string          `json:"tool,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	Gate     string          `json:"gate,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Pattern  string          `json:"pattern,omitempty"`
	Contract string          `json:"contract,omitempty"`
	Effect   string          `json:"effect,omitempty"`
	Undoable bool            `json:"undoable"`
	// Question is the model's question (KindQuestion).
	Question string `json:"question,omitempty"`
	// The session: its task, step, use so far and caps.
	Task    string  `json:"task,omitempty"`
	Step    int     `json:"step"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	Caps    Caps    `json:"caps"`
	// Asked and Expires bound the wait; at Expires the answer is No.
	Asked   time.Time `json:"asked"`
	Expires time.Time `json:"expires"`
	// Token is the single-use token an answer must carry; it dies with
	// the approval.
	Token string `json:"token"`
}

// Caps are a session's limits as the API shows them (0: no cap).
type Caps struct {
	MaxSteps     int     `json:"max_steps,omitempty"`
	MaxToolCalls int     `json:"max_tool_calls,omitempty"`
	MaxTokens    int64   `json:"max_tokens,omitempty"`
	MaxCostUSD   float64 `json:"max_cost_usd,omitempty"`
	// Timeout is the wall-time cap as a Go duration ("30m0s").
	Timeout string `json:"timeout,omitempty"`
}

// CapsOf is l as the API shows it.
func CapsOf(l budget.Limits) Caps {
	c := Caps{MaxSteps: l.MaxSteps, MaxToolCalls: l.MaxToolCalls, MaxTokens: l.MaxTokens, MaxCostUSD: l.MaxCostUSD}
	if l.MaxWall > 0 {
		c.Timeout = l.MaxWall.String()
	}
	return c
}

// Reply is a human's answer to a pending approval.
type Reply struct {
	Token    string `json:"token"`
	Decision string `json:"decision"`
	// Scope is "once" (also ""), "session" or "always": how far a yes
	// reaches; only where the approval offers a Pattern.
	Scope string `json:"scope,omitempty"`
	// Text is the reply to a question (decision "answer").
	Text string `json:"text,omitempty"`
}

// Outcome is what became of an approval: for the session's log and the
// event stream.
type Outcome struct {
	ID       string    `json:"id"`
	Session  string    `json:"session"`
	Decision string    `json:"decision"` // approve, deny, answer, or timeout (a No)
	Scope    string    `json:"scope,omitempty"`
	By       string    `json:"by"` // who answered, through which channel
	At       time.Time `json:"at"`
}

// The errors of answering; errors.Is tells them apart.
var (
	// ErrStale is a token that is not (or no longer) the approval's:
	// reused, expired, or another approval's (409).
	ErrStale = errors.New("the approval token is stale: used already, expired, or not this approval's")
	// ErrBadReply is a reply that does not say approve, deny or answer
	// properly (400).
	ErrBadReply = errors.New("bad reply")
)

// pending is an approval waiting, and where its answer goes.
type pending struct {
	a     Approval
	reply chan answered
}

type answered struct {
	ans  approve.Answer
	text string
	out  Outcome
}

// Queue holds the pending approvals of every session. An approval is
// answered once, by the holder of its token, before it expires; otherwise
// it is No.
type Queue struct {
	timeout time.Duration
	now     func() time.Time
	// onAsk and onDone are told of each approval and its outcome (event
	// stream, webhooks); they must not block.
	mu      sync.Mutex
	onAsk   []func(Approval)
	onDone  []func(Approval, Outcome)
	pending map[string]*pending
}

// NewQueue returns a queue whose approvals wait timeout (0: the default).
func NewQueue(timeout time.Duration) *Queue {
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	return &Queue{timeout: timeout, now: time.Now, pending: map[string]*pending{}}
}

// Watch adds callbacks told of each approval asked and of its outcome
// (the event stream, webhooks). They run on the asking session's goroutine
// and must not block.
func (q *Queue) Watch(ask func(Approval), done func(Approval, Outcome)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.onAsk = append(q.onAsk, ask)
	q.onDone = append(q.onDone, done)
}

type watcher struct {
	ask  func(Approval)
	done func(Approval, Outcome)
}

func (q *Queue) watchers() []watcher {
	q.mu.Lock()
	defer q.mu.Unlock()
	w := make([]watcher, len(q.onAsk))
	for i := range w {
		w[i] = watcher{q.onAsk[i], q.onDone[i]}
	}
	return w
}

// Pending lists the approvals waiting, oldest first; of one session when
// session is not empty.
func (q *Queue) Pending(session string) []Approval {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Approval, 0, len(q.pending))
	for _, p := range q.pending {
		if session == "" || p.a.Session == session {
			out = append(out, p.a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Asked.Before(out[j].Asked) || out[i].Asked.Equal(out[j].Asked) && out[i].ID < out[j].ID
	})
	return out
}

// Get returns one pending approval.
func (q *Queue) Get(id string) (Approval, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p, ok := q.pending[id]
	if !ok {
		return Approval{}, false
	}
	return p.a, true
}

// Wait puts a to the humans and waits for the answer, the timeout (No) or
// ctx (No). It fills in a's ID, token, times and (when zero) its timeout.
func (q *Queue) Wait(ctx context.Context, a Approval, timeout time.Duration) (approve.Answer, string, error) {
	if timeout <= 0 || timeout > q.timeout {
		timeout = q.timeout
	}
	a.ID, a.Token = newID(), newToken()
	a.Asked = q.now()
	a.Expires = a.Asked.Add(timeout)
	p := &pending{a: a, reply: make(chan answered, 1)}
	q.mu.Lock()
	q.pending[a.ID] = p
	q.mu.Unlock()
	for _, f := range q.watchers() {
		f.ask(a)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	var (
		got answered
		err error
	)
	select {
	case got = <-p.reply:
	case <-t.C:
		got = q.expire(p, "timeout: no answer in time, which is No")
	case <-ctx.Done():
		if got = q.expire(p, "the session stopped waiting, which is No"); got.out.Decision == "timeout" {
			err = ctx.Err()
		}
	}
	for _, f := range q.watchers() {
		f.done(a, got.out)
	}
	return got.ans, got.text, err
}

// expire takes p out of the queue unanswered, unless an answer won the
// race: then that answer (already in p.reply) is the outcome.
func (q *Queue) expire(p *pending, why string) answered {
	q.mu.Lock()
	_, ok := q.pending[p.a.ID]
	delete(q.pending, p.a.ID)
	q.mu.Unlock()
	if !ok {
		return <-p.reply
	}
	return answered{out: Outcome{ID: p.a.ID, Session: p.a.Session, Decision: "timeout", By: "rein: " + why, At: q.now()}}
}

// Answer gives the pending approval id the reply r from by (who, through
// which channel). A token that is not the approval's, an approval that
// expired or was answered already are ErrStale; an unknown id whose token
// matches none is ErrNotFound.
func (q *Queue) Answer(id string, r Reply, by string) (Outcome, error) {
	ans, text, err := r.answer()
	if err != nil {
		return Outcome{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	p, ok := q.pending[id]
	if !ok {
		return Outcome{}, fmt.Errorf("approval %s: %w", id, ErrStale)
	}
	if subtle.ConstantTimeCompare([]byte(p.a.Token), []byte(r.Token)) != 1 {
		return Outcome{}, fmt.Errorf("approval %s: %w", id, ErrStale)
	}
	if !q.now().Before(p.a.Expires) {
		return Outcome{}, fmt.Errorf("approval %s expired at %s: %w", id, p.a.Expires.UTC().Format(time.RFC3339), ErrStale)
	}
	switch {
	case p.a.Kind == KindQuestion && r.Decision == DecisionApprove:
		return Outcome{}, fmt.Errorf("%w: approval %s is a question: reply with decision \"answer\" and a text, or \"deny\"", ErrBadReply, id)
	case p.a.Kind != KindQuestion && r.Decision == DecisionAnswer:
		return Outcome{}, fmt.Errorf("%w: approval %s is a call: decide \"approve\" or \"deny\"", ErrBadReply, id)
	}
	if ans.Scope != approve.Once {
		if p.a.Pattern == "" {
			return Outcome{}, fmt.Errorf("%w: approval %s offers no sticky answer: scope must be \"once\"", ErrBadReply, id)
		}
		ans.Pattern = p.a.Pattern
	}
	ans.By = by
	delete(q.pending, id)
	out := Outcome{ID: id, Session: p.a.Session, Decision: r.Decision, By: by, At: q.now()}
	if ans.Yes {
		out.Scope = ans.Scope.String()
	}
	p.reply <- answered{ans: ans, text: text, out: out}
	return out, nil
}

// answer checks r and reads it as an answer.
func (r Reply) answer() (approve.Answer, string, error) {
	var ans approve.Answer
	switch r.Decision {
	case DecisionApprove, DecisionAnswer:
		ans.Yes = true
	case DecisionDeny:
	default:
		return ans, "", fmt.Errorf("%w: field \"decision\" must be \"approve\", \"deny\" or \"answer\", not %q", ErrBadReply, r.Decision)
	}
	if r.Token == "" {
		return ans, "", fmt.Errorf("%w: field \"token\" is required: the approval's token from GET /v1/approvals", ErrBadReply)
	}
	switch r.Scope {
	case "", "once":
	case "session":
		ans.Scope = approve.Session
	case "always":
		ans.Scope = approve.Always
	default:
		return ans, "", fmt.Errorf("%w: field \"scope\" must be \"once\", \"session\" or \"always\", not %q", ErrBadReply, r.Scope)
	}
	if !ans.Yes {
		ans.Scope = approve.Once
	}
	if r.Decision == DecisionAnswer && r.Text == "" {
		return ans, "", fmt.Errorf("%w: field \"text\" is required with decision \"answer\"", ErrBadReply)
	}
	return ans, r.Text, nil
}

// Close answers every pending approval No (the server is going away).
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for id, p := range q.pending {
		delete(q.pending, id)
		p.reply <- answered{out: Outcome{ID: id, Session: p.a.Session, Decision: "timeout", By: "rein: the server stopped, which is No", At: q.now()}}
	}
}

func newID() string    { return "ap-" + randHex(8) }
func newToken() string { return randHex(24) }

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
