package computer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// Defaults for the zero fields of Config.Limits.
const (
	DefaultMaxSteps = 30
	DefaultMaxWall  = 300 * time.Second
)

// Config is a computer-use session. Model and Env are required.
type Config struct {
	// Model is a vision model that answers with calls of the action tools
	// (computer/anthropic, or Scripted offline).
	Model model.Model
	// ModelName is recorded in the session_start record.
	ModelName string
	Env       Env
	// Approver is asked about irreversible actions; nil says no to all.
	Approver approve.Approver
	// Audit receives every record; nil keeps none.
	Audit AuditLog
	// Session is the session id, for idempotency keys.
	Session string
	// Limits: zero MaxSteps means DefaultMaxSteps, zero MaxWall
	// DefaultMaxWall; MaxToolCalls caps actions, MaxCostUSD cost.
	Limits budget.Limits
	// Price turns a model call's usage into dollars; nil counts no cost.
	Price func(model.Usage) float64
	// Policy says what is allowed on screen; its zero Words means DefaultWords.
	Policy Policy
	// Caps are per-run caps of actions by tool name (gate.NewLimit): an
	// irreversible click or key without a cap of its own may run
	// gate.DefaultIrreversible times.
	Caps map[string]int
	// Gates are more gates, run after rein's own (the data-flow gate, say).
	Gates []gate.Gate
	// Provenance, when set, is told where the texts of the context came
	// from (agent.Config.Provenance).
	Provenance agent.Provenance
	// System replaces the system instructions (tests); "" means System.
	System string
	// Meta is recorded in the session_start record (allowlist, start URL).
	Meta json.RawMessage
	// Planned makes the session plan: the model states the irreversible
	// actions its task needs with the plan tool before it sees the screen,
	// the user is asked about that plan once, and then irreversible
	// actions inside it run without a question and any other is refused
	// without one (docs/computer-use.md). Plan, when set, is a plan given
	// with the task, in force from the start (Planned is then implied).
	Planned bool
	Plan    *Plan
}

// AuditLog receives every record of a run; *audit.Writer implements it. An
// error stops the run: rein does not act unrecorded.
type AuditLog = agent.AuditLog

// Session runs computer-use tasks in agent.Loop: the actions are tools of
// a Screen, the screen policy is a gate, the screenshots image blocks.
type Session struct {
	loop     *agent.Loop
	screen   *Screen
	approver *approve.Recorder
}

// New checks cfg and returns a session. Its pipeline is, in order:
// availability (the five actions), validation (schema and screen size),
// the screen policy, confirm (irreversible calls, as classed by the
// element under the pointer), the per-run limit, then cfg.Gates. An Ask is
// put to cfg.Approver by the pipeline, as for every tool.
func New(cfg Config) (*Session, error) {
	if cfg.Model == nil {
		return nil, errors.New("computer: no model: set Config.Model")
	}
	if cfg.Env == nil {
		return nil, errors.New("computer: no environment: set Config.Env (computer/browser)")
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("computer: %w", err)
	}
	if cfg.Limits.MaxSteps == 0 {
		cfg.Limits.MaxSteps = DefaultMaxSteps
	}
	if cfg.Limits.MaxWall == 0 {
		cfg.Limits.MaxWall = DefaultMaxWall
	}
	if cfg.Approver == nil {
		cfg.Approver = approve.Deny{}
	}
	if cfg.System == "" {
		cfg.System = System
	}
	screen := NewScreen(cfg.Env, cfg.Policy, cfg.Audit)
	if cfg.Plan != nil {
		if err := cfg.Plan.check(screen.policy.Words); err != nil {
			return nil, fmt.Errorf("computer: %w", err)
		}
	}
	if (cfg.Planned || cfg.Plan != nil) && !cfg.Policy.Off {
		screen.Planned(cfg.Plan)
		if cfg.System == System {
			cfg.System += PlanSystem
		}
	}
	tools := screen.Tools()
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		return nil, fmt.Errorf("computer: %w", err)
	}
	rec := &approve.Recorder{Next: cfg.Approver}
	gates := append([]gate.Gate{gate.NewAvailability(reg.Names()), gate.Validation{}, screen.Gate(), gate.Confirm{}, gate.NewLimit(cfg.Caps)},
		cfg.Gates...)
	loop, err := agent.New(agent.Config{Model: cfg.Model, ModelName: cfg.ModelName, Tools: reg,
		Gates: gate.NewPipeline(rec, gates...), Limits: cfg.Limits, Audit: cfg.Audit, System: cfg.System,
		Price: cfg.Price, Meta: cfg.Meta, Session: cfg.Session, Provenance: cfg.Provenance, Attach: screen.Attach})
	if err != nil {
		return nil, fmt.Errorf("computer: %w", err)
	}
	return &Session{loop: loop, screen: screen, approver: rec}, nil
}

// Result is how a run ended (agent.Result: the stop reason, the model's
// final answer, steps, usage, refusals by gate, the conversation) and what
// the screen saw.
type Result struct {
	agent.Result
	Stats
	// Approvals counts the times a human was asked. A human's no is a
	// refusal of gate approval (Refusals[gate.NameApproval]).
	Approvals int `json:"approvals"`
}

// Declined reports whether a human said no to an action in the run.
func (r Result) Declined() bool { return r.Refusals[gate.NameApproval] > 0 }

// Run runs task until it stops. It returns after the stop is recorded.
// Runs of one Session follow each other on the same Env; the screen's
// counts start again with each.
// Refusals holds the loop's refusals by gate and, under GateNetwork, the
// requests the environment blocked.
func (s *Session) Run(ctx context.Context, task string) Result {
	s.screen.reset()
	asked := len(s.approver.Requests())
	res := Result{Result: s.loop.Run(ctx, task), Stats: s.screen.Stats()}
	res.Approvals = len(s.approver.Requests()) - asked
	if n := len(res.Blocked); n > 0 {
		if res.Refusals == nil {
			res.Refusals = map[string]int{}
		}
		res.Refusals[GateNetwork] += n
	}
	return res
}
