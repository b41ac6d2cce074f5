package serve

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/reinhq/rein/agent/stop"
	"github.com/reinhq/rein/session/rollback"
)

// Host starts, runs and keeps sessions. The server's handlers know sessions
// only through it, so a durable, distributed backend (docs/scale.md) can
// replace the in-process one (Local) without touching the API.
type Host interface {
	// Create builds a session from req with the public session builder and
	// starts it; it returns once the session is running.
	Create(ctx context.Context, req CreateRequest) (Info, error)
	// Sessions lists every session the host knows, newest first.
	Sessions() []Info
	// Session returns one session, or ErrNotFound.
	Session(id string) (Info, error)
	// Events returns the session's events from number from on (0: all), in
	// order, as JSON objects, and a channel closed when more arrive or the
	// session ends; ended reports that no more will come.
	Events(id string, from int) (evs []json.RawMessage, more <-chan struct{}, ended bool, err error)
	// Abort stops a running session (the tool in flight is killed); a
	// session that has ended is left as it is.
	Abort(id, reason string) error
	// AbortAll stops every running session and returns how many it told.
	AbortAll(reason string) int
	// Rollback undoes the files an ended session changed.
	Rollback(id string) ([]rollback.FileReport, error)
	// AuditPath is the path of the session's audit log.
	AuditPath(id string) (string, error)
	// Close aborts every session and waits for them to end (or ctx).
	Close(ctx context.Context) error
}

// ErrNotFound is a session or approval the server does not know (404).
var ErrNotFound = errors.New("not found")

// ErrRunning is an action that needs an ended session asked of a running one (409).
var ErrRunning = errors.New("the session is still running: abort it first")

// States of a session.
const (
	StateRunning     = "running"
	StateEnded       = "ended"
	StateInterrupted = "interrupted" // its server died while it ran; rein resume ID continues it
)

// CreateRequest is the body of POST /v1/sessions.
type CreateRequest struct {
	// Task is what the agent is to do. Required.
	Task string `json:"task"`
	// Model is PROVIDER:MODEL, as for rein run --model; empty is the
	// server's default.
	Model string `json:"model,omitempty"`
	// Tools is the allowlist (rein run --tools); nil is the config's.
	Tools []string `json:"tools,omitempty"`
	// Mode is the permission mode (rein run --mode).
	Mode string `json:"mode,omitempty"`
	// Limits are the session's caps; absent ones are the config's.
	Limits *Limits `json:"limits,omitempty"`
	// Workdir is the directory the session works in. Required.
	Workdir string `json:"workdir"`
	// Tenant names whose budget the session spends in the server's
	// ledger ([budget] tenant caps); empty is "default".
	Tenant string `json:"tenant,omitempty"`
}

// Limits are a session's caps, as rein run's flags give them.
type Limits struct {
	MaxSteps     *int     `json:"max_steps,omitempty"`
	MaxToolCalls *int     `json:"max_tool_calls,omitempty"`
	MaxTokens    *int64   `json:"max_tokens,omitempty"`
	MaxCostUSD   *float64 `json:"max_cost_usd,omitempty"`
	// Timeout is a Go duration ("90s", "30m").
	Timeout string `json:"timeout,omitempty"`
}

// Info is what the API says of a session.
type Info struct {
	ID      string    `json:"id"`
	Task    string    `json:"task"`
	Model   string    `json:"model,omitempty"`
	Tenant  string    `json:"tenant,omitempty"`
	Workdir string    `json:"workdir,omitempty"`
	State   string    `json:"state"`
	Started time.Time `json:"started"`
	Step    int       `json:"step"`
	Tokens  int64     `json:"tokens"`
	CostUSD float64   `json:"cost_usd"`
	// Pending counts the session's approvals waiting for an answer.
	Pending int `json:"pending_approvals"`
	// Refusals counts the calls refused, by the gate that refused them.
	Refusals map[string]int `json:"refusals,omitempty"`
	// Stop is set once the session has ended.
	Stop *StopInfo `json:"stop,omitempty"`
	// Resume is the command that continues an interrupted session.
	Resume string `json:"resume,omitempty"`
	Audit  string `json:"audit,omitempty"`
}

// StopInfo is how a session ended.
type StopInfo struct {
	Reason stop.Reason `json:"reason"`
	Answer string      `json:"answer,omitempty"`
	Steps  int         `json:"steps"`
	Tokens int64       `json:"tokens"`
	Error  string      `json:"error,omitempty"`
}
