package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
)

// Ask is the body of POST /v1/approvals: a question from a session that
// runs elsewhere (`rein run --approvals URL`), put into this server's
// queue. The request waits for the answer, the timeout (No) or the asker
// hanging up (No).
type Ask struct {
	Session  string          `json:"session"`
	Kind     string          `json:"kind"` // "call" or "question"
	Task     string          `json:"task,omitempty"`
	Tool     string          `json:"tool,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	Gate     string          `json:"gate,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Pattern  string          `json:"pattern,omitempty"`
	Contract string          `json:"contract,omitempty"`
	Effect   string          `json:"effect,omitempty"`
	Undoable bool            `json:"undoable,omitempty"`
	Question string          `json:"question,omitempty"`
	Step     int             `json:"step,omitempty"`
	Tokens   int64           `json:"tokens,omitempty"`
	CostUSD  float64         `json:"cost_usd,omitempty"`
	Caps     *Caps           `json:"caps,omitempty"`
	// TimeoutSeconds is how long to wait; at most the server's own.
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
}

// Answered is the reply to POST /v1/approvals.
type Answered struct {
	Outcome
	Yes     bool   `json:"yes"`
	Pattern string `json:"pattern,omitempty"`
	Text    string `json:"text,omitempty"`
}

func (s *Server) askApproval(w http.ResponseWriter, r *http.Request) {
	var a Ask
	if !decode(w, r, &a) {
		return
	}
	switch {
	case a.Session == "":
		writeError(w, http.StatusBadRequest, `field "session" is required: the asking session's id`)
		return
	case a.Kind != KindCall && a.Kind != KindQuestion:
		writeError(w, http.StatusBadRequest, `field "kind" must be "call" or "question"`)
		return
	case a.Kind == KindCall && a.Tool == "":
		writeError(w, http.StatusBadRequest, `field "tool" is required for a call`)
		return
	case a.Kind == KindQuestion && a.Question == "":
		writeError(w, http.StatusBadRequest, `field "question" is required for a question`)
		return
	case a.TimeoutSeconds < 0:
		writeError(w, http.StatusBadRequest, `field "timeout_seconds" must not be negative`)
		return
	}
	ap := Approval{Session: a.Session, Kind: a.Kind, Task: a.Task, Tool: a.Tool, Args: a.Args, Gate: a.Gate, Reason: a.Reason,
		Pattern: a.Pattern, Contract: a.Contract, Effect: a.Effect, Undoable: a.Undoable, Question: a.Question,
		Step: a.Step, Tokens: a.Tokens, CostUSD: a.CostUSD}
	if a.Caps != nil {
		ap.Caps = *a.Caps
	}
	ans, text, err := s.o.Queue.Wait(r.Context(), ap, time.Duration(a.TimeoutSeconds*float64(time.Second)))
	if err != nil {
		return // the asker hung up: it has its No
	}
	out := Answered{Yes: ans.Yes, Pattern: ans.Pattern, Text: text}
	out.Decision, out.By = DecisionDeny, ans.By
	if ans.Yes {
		out.Decision, out.Scope = DecisionApprove, ans.Scope.String()
		if text != "" {
			out.Decision = DecisionAnswer
		}
	}
	if ans.By == "" {
		out.Decision, out.By = "timeout", "rein: no answer in time, which is No"
	}
	writeJSON(w, http.StatusOK, out)
}

func verifyFile(path string) (audit.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return audit.Report{}, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	return audit.Verify(f)
}

// Remote is an approver (and asker) that sends a session's questions to a
// running `rein serve` and waits there for the answer: `rein run
// --approvals URL`. No answer in time, an unreachable server or any error
// is No.
type Remote struct {
	// URL is the server's base URL ("http://127.0.0.1:7878").
	URL string
	// Token is the server's bearer token.
	Token string
	// Session and Task say who asks.
	Session, Task string
	// Timeout is how long a question waits (0: the server's default).
	Timeout time.Duration
	// Client is the HTTP client; nil is one without a total timeout (the
	// wait is bounded by Timeout and ctx).
	Client *http.Client
	// State, when set, says where the session stands (step, tokens, cost,
	// caps), shown with each question.
	State func() (step int, tokens int64, cost float64, caps budget.Limits)
	// Effect, when set, says a tool's effect class and whether rein can
	// undo it.
	Effect func(tool string) (effect string, undoable bool)
}

var (
	_ approve.Chooser = (*Remote)(nil)
	_ approve.Asker   = (*Remote)(nil)
)

func (c *Remote) ask(ctx context.Context, a Ask) (Answered, error) {
	a.Session, a.Task, a.TimeoutSeconds = c.Session, c.Task, c.Timeout.Seconds()
	if c.State != nil {
		var caps budget.Limits
		a.Step, a.Tokens, a.CostUSD, caps = c.State()
		cp := CapsOf(caps)
		a.Caps = &cp
	}
	body, err := json.Marshal(a)
	if err != nil {
		return Answered{}, err
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout+10*time.Second)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/v1/approvals", bytes.NewReader(body))
	if err != nil {
		return Answered{}, fmt.Errorf("approvals: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Content-Type", "application/json")
	hc := c.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Answered{}, fmt.Errorf("approvals: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return Answered{}, fmt.Errorf("approvals: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e apiError
		_ = json.Unmarshal(b, &e)
		return Answered{}, fmt.Errorf("approvals: %s: %s", resp.Status, e.Error)
	}
	var out Answered
	if err := json.Unmarshal(b, &out); err != nil {
		return Answered{}, fmt.Errorf("approvals: the server's answer: %w", err)
	}
	return out, nil
}

// Choose sends the call to the server's queue and waits.
func (c *Remote) Choose(ctx context.Context, req approve.Request) (approve.Answer, error) {
	a := Ask{Kind: KindCall, Tool: req.Tool, Args: req.Args, Gate: req.Gate, Reason: req.Reason, Pattern: req.Pattern, Contract: req.Contract}
	if c.Effect != nil {
		a.Effect, a.Undoable = c.Effect(req.Tool)
	}
	out, err := c.ask(ctx, a)
	if err != nil {
		return approve.Answer{}, err
	}
	ans := approve.Answer{Yes: out.Yes, By: out.By}
	switch out.Scope {
	case "session":
		ans.Scope = approve.Session
	case "always":
		ans.Scope = approve.Always
	}
	if ans.Scope != approve.Once {
		ans.Pattern = out.Pattern
	}
	return ans, nil
}

// Approve is Choose's yes or no.
func (c *Remote) Approve(ctx context.Context, req approve.Request) (bool, error) {
	ans, err := c.Choose(ctx, req)
	return ans.Yes && err == nil, err
}

// Ask sends the model's question to the server's queue and waits.
func (c *Remote) Ask(ctx context.Context, question string) (string, error) {
	out, err := c.ask(ctx, Ask{Kind: KindQuestion, Question: question})
	if err != nil {
		return "", err
	}
	if !out.Yes || out.Text == "" {
		return "", approve.ErrNoAnswer
	}
	return out.Text, nil
}

// ReadToken reads a token file: its first line, trimmed. An empty or
// short token is an error.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := string(bytes.TrimSpace(bytes.SplitN(b, []byte("\n"), 2)[0]))
	if len(tok) < 16 {
		return "", errors.New("token file " + path + ": the token must be at least 16 characters on its first line")
	}
	return tok, nil
}
