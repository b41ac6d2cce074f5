// Package agent runs the guarded loop: the model proposes tool calls, the
// gates decide, the tools act, and the results go back to the model, until
// exactly one stop reason ends the run. It is rein's embedding API.
//
// The stop rule does not depend on the model: caps on steps, tool calls,
// tokens, cost and wall time end the run whatever the model wants, and the
// token and cost caps are checked after each response and before any tool of
// that response runs. Tool failures and refusals go back to the model as
// error results; they never end the run. Every event is written to the audit
// log, and a tool's intent is written before the tool runs: if the record
// cannot be written, the tool does not run.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reinhq/rein/agent/stop"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// StopReason is why a run ended. Every run ends with exactly one. The
// reasons live in the leaf package stop, which the audit log shares.
type StopReason = stop.Reason

// The stop reasons.
const (
	StopDone     = stop.Done     // the model asked for no tool
	StopMaxSteps = stop.MaxSteps // the step cap was reached
	StopBudget   = stop.Budget   // the token, cost or tool-call cap was exceeded
	StopTimeout  = stop.Timeout  // the wall-time cap passed
	StopAborted  = stop.Aborted  // the caller's context was cancelled
	StopError    = stop.Error    // the model failed, or the audit log could not be written
)

// AuditLog receives every record of a run, in order. An error ends the run
// with StopError: rein does not act unrecorded. *audit.Writer implements it.
type AuditLog interface {
	Write(r audit.Record) error
}

// Config is everything a Loop needs. Model, Tools and Gates are required.
type Config struct {
	// Model proposes; it never acts.
	Model model.Model
	// ModelName names the model in the audit log; when empty, a model with a
	// Name() string method names itself.
	ModelName string
	// Tools are the tools the session knows. Which of them the model is
	// shown and may call is the gates' decision (gate.Offerer).
	Tools *tool.Registry
	// Gates decide every call, in order, and resolve Ask through their approver.
	Gates *gate.Pipeline
	// Limits cap the run. The zero value caps nothing; see budget.Defaults.
	Limits budget.Limits
	// Audit receives the run's records. Nil discards them.
	Audit AuditLog
	// System is the system prompt.
	System string
	// Price returns the cost in USD of a call's usage. Nil prices nothing.
	Price func(model.Usage) float64
	// Meta is extra effective configuration recorded at session start
	// (the CLI's flags and config file, for instance). It must be a JSON object.
	Meta json.RawMessage
	// ClipResults is how many bytes of a tool result an audit record keeps;
	// the record always has the full size and SHA-256. Default 4096.
	ClipResults int
	// Session is the session id; it goes into every idempotency key.
	Session string
	// Redact, when set, is applied to everything that reaches the model
	// from outside it: the task and every tool result (secrets stay out of
	// its sight). The audit log redacts on its own (audit.WithRedactor).
	Redact func(string) string
	// MaxContextTokens, when set, compacts the conversation before a model
	// call that would be over 80% of it (see KeepMessages).
	MaxContextTokens int64
	// MaxResultBytes caps a tool result the model sees (default 32 KiB),
	// with a notice saying how to read more; the audit log has its size and
	// SHA-256 either way.
	MaxResultBytes int
	// Intake, when set, marks where text came from before the model sees
	// it: the task as the user's input, each tool result as data (the audit
	// log keeps the raw text).
	Intake Intake
	// Provenance, when set, is told where every text that enters the
	// context came from: the task (and later user messages) as trusted,
	// each tool result as untrusted, under the tool's name (flow.Ledger).
	// It gets the text as the model will read it, redacted and capped, and
	// not wrapped. Refusals and rein's own notices are not told: they are
	// rein's words, not a source's.
	Provenance Provenance
	// Attach, when set, is called once at the start of a run, after the
	// session_start record; the blocks it returns join the task's message
	// (the screen as it is before the first action, for computer use). They
	// are observations and go to the model as they are: no intake wraps an
	// image. An error stops the run (StopError).
	Attach func(ctx context.Context) ([]model.Block, error)
	// Snapshots, when set, saves the files a call may change (tool.Changer)
	// before it runs, for rollback. A call whose files cannot be saved does
	// not run.
	Snapshots Snapshotter
	// Ledger, when set, is a budget shared with other runs (rein serve's
	// ledger): each model call is reserved there before it is made and
	// settled after. A refusal stops the run with StopBudget, a ledger
	// that cannot be asked with StopError: no call is made unrecorded.
	// Nil: the run's own Limits only, at no cost.
	Ledger Ledger
}

// Ledger is a budget that outlives the run, across sessions (package
// ledger; serve.RemoteLedger for a run that points at rein serve).
// Reserve admits a model call expected to use c (its input as counted, and
// what that costs), or refuses it with a *budget.ExceededError naming the
// cap; Settle records what the call used in place of the reservation.
type Ledger interface {
	Reserve(ctx context.Context, c budget.Charge) (ticket string, err error)
	Settle(ctx context.Context, ticket string, c budget.Charge) error
}

// Intake wraps what enters the model's context (intake.Wrapper).
type Intake interface {
	Task(task string) string
	// Result wraps a tool's result by where it came from, as the tool
	// said (model.Source), never by its name or its words.
	Result(tool string, src model.Source, content string) string
}

// Provenance records where the texts that enter the context came from.
type Provenance interface {
	Trusted(text string)
	Untrusted(source, text string)
}

// Authorship is an optional ability of a Provenance (flow.Ledger has it):
// it is told what the model wrote itself, which is neither the user's word
// nor a source's. The loop gives it each call's arguments before the call
// runs (t is the call's tool, nil when unknown), and the result of a tool
// that repeats the model's own words (tool.Spec.Echoes) in place of
// Untrusted.
type Authorship interface {
	Arguments(t tool.Tool, args json.RawMessage)
	Authored(tool, text string)
}

// Reads is an optional ability of a Provenance (flow.Ledger has it): told
// each untrusted tool result with the arguments of the call that returned
// it, in place of Untrusted, it can trace a value to one read of one
// resource (the task contract's "from" bindings: "the amount in
// bill.txt"). args is nil when the call is not known.
type Reads interface {
	Read(source string, args json.RawMessage, text string)
}

// Computations is an optional ability of a Provenance (flow.Ledger has
// it): told the result of a tool that computes from its arguments alone
// (tool.Spec.Computes) with those arguments, in place of Untrusted, it can
// tell a sum of the user's own numbers from one of numbers a tool
// returned.
type Computations interface {
	Computed(source string, args json.RawMessage, text string)
}

// noteResult tells p what a tool returned: as the model's own words when
// the tool echoes them and p can tell them apart, else as untrusted (with
// the call's arguments, when p keeps reads).
func noteResult(p Provenance, t tool.Tool, name string, args json.RawMessage, content string) {
	if a, ok := p.(Authorship); ok && t != nil && t.Spec().Echoes {
		a.Authored(name, content)
		return
	}
	if c, ok := p.(Computations); ok && t != nil && t.Spec().Computes {
		c.Computed(name, args, content)
		return
	}
	if r, ok := p.(Reads); ok {
		r.Read(name, args, content)
		return
	}
	p.Untrusted(name, content)
}

// noteArgs tells p, when it can tell authorship, the arguments of a call.
func noteArgs(p Provenance, t tool.Tool, args json.RawMessage) {
	if a, ok := p.(Authorship); ok {
		a.Arguments(t, args)
	}
}

// Snapshotter saves the current state of a file in the work dir, before a
// tool changes it, and returns an id for the audit log.
type Snapshotter interface {
	Snapshot(rel string) (id string, err error)
}

// Loop runs tasks under one configuration. A Loop holds no per-run state, so
// it may run several tasks one after another; runs must not share a model
// that keeps conversation state (the scripted model does).
type Loop struct {
	cfg     Config
	offered []model.ToolDef
	names   []string
}

// New checks cfg and returns a Loop.
func New(cfg Config) (*Loop, error) {
	switch {
	case cfg.Model == nil:
		return nil, errors.New("agent: Config.Model is nil")
	case cfg.Tools == nil:
		return nil, errors.New("agent: Config.Tools is nil")
	case cfg.Gates == nil:
		return nil, errors.New("agent: Config.Gates is nil")
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if cfg.Meta != nil && !json.Valid(cfg.Meta) {
		return nil, errors.New("agent: Config.Meta is not valid JSON")
	}
	if cfg.ClipResults <= 0 {
		cfg.ClipResults = 4096
	}
	if cfg.ModelName == "" {
		if n, ok := cfg.Model.(interface{ Name() string }); ok {
			cfg.ModelName = n.Name()
		}
	}
	l := &Loop{cfg: cfg}
	for _, name := range cfg.Tools.Names() {
		if cfg.Gates.Offers(name) {
			l.names = append(l.names, name)
		}
	}
	l.offered = cfg.Tools.Defs(l.names)
	return l, nil
}

// Offered returns the names of the tools the model is shown.
func (l *Loop) Offered() []string { return append([]string(nil), l.names...) }

// Result is the outcome of a run.
type Result struct {
	Stop StopReason `json:"stop"`
	// Answer is the model's final text; empty unless Stop is StopDone.
	Answer    string         `json:"answer"`
	Steps     int            `json:"steps"`
	ToolCalls int            `json:"tool_calls"`
	Usage     model.Usage    `json:"usage"`
	Tokens    int64          `json:"tokens"`
	CostUSD   float64        `json:"cost_usd"`
	Refusals  map[string]int `json:"refusals,omitempty"` // refused calls by gate
	// Messages is the whole conversation (compacted, if it was), task
	// first, raw: the task and each tool result as they entered it
	// (redacted, not capped, not wrapped), each result with its source
	// and refusal flag. What the model read is built from it when each
	// request is; a conversation's next turn passes it on (State).
	Messages []model.Message `json:"-"`
	// Answered, when a stop cut a step short (Messages then ends with the
	// model's message that asked for tools), are the answers of that
	// message's calls recorded before the stop, in order: results, and
	// refusals. The calls without one may or may not have run. A
	// conversation's next turn shows them (NextTurn).
	Answered []model.ToolResult `json:"-"`
	// Err is the cause for every stop but StopDone: the exceeded limit, the
	// model's error, the context's cause.
	Err error `json:"-"`
}
