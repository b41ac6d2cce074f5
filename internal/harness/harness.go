// Package harness assembles one session of rein from its parts — audit log,
// tools, gates, sandbox, budget, model — and runs it. It is the engine of
// the public builder, agent/guarded, which every session of rein's goes
// through (rein run, the conversation, resume, demo); nothing else should
// import it. What a demo or an eval adds (seed files, ground truth, its
// own tools and counts) is theirs, not the assembly's.
package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate/contract"
	"github.com/reinhq/rein/gate/drift"
	"github.com/reinhq/rein/gate/flow"
	"github.com/reinhq/rein/intake"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/secret"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/mail"
	"github.com/reinhq/rein/tool/plan"
)

// Spec is one session to run.
type Spec struct {
	Task  string
	Model model.Model
	// WorkDir is the absolute work directory: the file tools are rooted
	// there and the shell runs there. Required.
	WorkDir string
	// ReadLines is read_file's default limit in lines (default 2000).
	ReadLines int
	// Policy decides the calls: allowlist, mode, rules, per-tool limits, approver.
	Policy Policy
	// NetAllow lists internal hosts webfetch may reach.
	NetAllow []string
	// NetDomains, when set, are the only hosts webfetch may fetch from
	// (netguard.Policy.Domains).
	NetDomains []string
	// Asker answers ask_question; nil means nobody answers.
	Asker  approve.Asker
	Limits budget.Limits
	// AuditDir is where the audit log goes; empty for audit.DefaultDir().
	AuditDir string
	// RollbackDir is where file snapshots go; empty for rollback.Dir().
	// NoRollback keeps none (a demo's temporary work dir, say).
	RollbackDir string
	NoRollback  bool
	Durability  audit.Durability
	// Observe sees every audit record as it is written (trace, --json events).
	Observe func(audit.Record)
	// Meta is recorded at session start as the effective configuration.
	Meta any
	// Resume, when set, continues an interrupted session instead of
	// starting one: its log, its id, where it stood.
	Resume *Resumed
	// MaxContextTokens compacts the conversation near this budget (0: never).
	MaxContextTokens int64
	// Price is the model's cost per call's usage; nil tracks no cost.
	Price func(model.Usage) float64
	// Ledger is the budget shared with other sessions; nil: none.
	Ledger agent.Ledger
	// System is the system prompt (prompt.System() for rein run; the demos
	// have none).
	System string
	// Redact, when set, keeps secrets out of the model's sight and out of
	// the audit log (secret.Redactor.Redact).
	Redact func(string) string
	// Sandbox is how commands run (default: the strongest available; with
	// none available, commands are refused).
	Sandbox Sandbox
	// Announce, when set, is told the sandbox chosen before the session
	// starts (rein prints a loud warning for none).
	Announce func(backend string)
	// Drift adds the intent-drift gate (gate/drift): a high-risk call whose
	// arguments name something sensitive that neither the task nor, in a
	// conversation, any later message of the user's mentions needs a
	// human's yes (the model's own notes account for nothing).
	Drift bool
	// Next, when set, makes the session a conversation of turns: after
	// each turn, Next gets its result and returns the user's next message;
	// the loop goes on with the whole conversation so far, in the same
	// audit log. ok false ends the session. A turn ends the session only
	// when the conversation cannot go on (TurnEnded): a turn cancelled by
	// TurnContext, stopped by a per-turn cap (steps, tool calls, wall time)
	// or by a failed model call ends only the turn.
	Next func(ctx context.Context, res agent.Result) (msg string, ok bool)
	// TurnContext, when set, gives each turn of a conversation (the first
	// is 1) its own context, derived from the session's: cancelling it
	// (agent.WithAbort) aborts that turn only. Nil runs every turn under
	// the session's context.
	TurnContext func(ctx context.Context, turn int) (context.Context, context.CancelFunc)
	// Tools are the caller's own tools, added to the built-in ones; they
	// are judged by the same gates (by their spec's effect class and
	// argument roles) and must be on the allowlist to be offered.
	Tools []tool.Tool
	// Egress are the logs of egress proxies the caller started before the
	// session (its MCP servers' sandbox): their connections go to the
	// session's audit log once it is open.
	Egress []*EgressLog
	// ID, when set, is the new session's id (session.NewID); empty makes
	// one. A resumed session keeps its own.
	ID string
}

// Resumed is an interrupted session to continue.
type Resumed struct {
	Log   *audit.Writer // the session's own log, opened with audit.Append
	State agent.State
	// Boundary is the session's intake boundary, from its start record
	// (meta "intake_boundary"); empty makes a new one.
	Boundary string
	// Goals are the user's messages after the task, from the log: the
	// intent-drift gate counts them as part of the task, as it did live.
	Goals []string
	// Message, when set, goes on with a new turn of the conversation (rein
	// chat --resume): State's last turn is closed as a live conversation
	// closes it (Ended says why it ended early, "" when it ended done) and
	// the user's message follows. Unset, the interrupted turn goes on
	// from where it stood (rein resume).
	Message string
	Ended   string
}

// Outcome is what a session did.
type Outcome struct {
	agent.Result
	Outbox []mail.Message
	Todos  []plan.Todo
	// Changed lists the files the session's tools were about to change,
	// each saved for rollback first, in order.
	Changed []string
	// RollbackDir is where the snapshots are ("" when none were kept).
	RollbackDir string
	Session     string
	Audit       string

	// Unsaved counts the calls refused because the rollback store could
	// not be written (full, read-only); Unsettled, the calls whose result
	// the store could not record. Either makes `rein run` exit 1.
	Unsaved, Unsettled int
}

// Run runs one session. The error is for a session that could not start
// (bad spec, unwritable audit directory); everything after the start is in
// the Outcome.
func Run(ctx context.Context, spec Spec) (*Outcome, error) {
	workdir := spec.WorkDir
	if workdir == "" {
		return nil, errors.New("work dir: Spec.WorkDir is required")
	}
	root, err := os.OpenRoot(workdir)
	if err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	defer root.Close()
	id := spec.ID
	if id == "" {
		id = session.NewID(time.Now())
	}
	if spec.Resume != nil {
		id = spec.Resume.Log.Session()
	}
	// Commands get the allowlisted environment and the session's id and
	// token; the token is rotated when the session ends.
	token, err := secret.NewSessionToken()
	if err != nil {
		return nil, err
	}
	defer func() { _ = token.Rotate() }() // the old token is no longer the session's
	// Only a session that may run commands opens a sandbox.
	var exec sandbox.Executor = unavailable{errors.New("run_bash is not on this session's allowlist")}
	backend := ""
	// The executor closes before the audit log does: its egress proxy
	// records each connection when it ends, and a connection still
	// open (or just ended) when the session stops must be in the log.
	closeExec := func() {}
	elog := &EgressLog{}
	if spec.Sandbox.Egress != nil {
		cfg := *spec.Sandbox.Egress
		cfg.Record = elog.Record
		spec.Sandbox.Egress = &cfg
	}
	if slices.Contains(spec.Policy.Allowed, "run_bash") {
		// The sandbox's setup waits for the first model request and then
		// costs the model's think time, not the wait before that request.
		if spec.Model != nil { // nil: agent.New says so
			hold := make(chan struct{})
			spec.Sandbox.Hold, spec.Model = hold, releaseAtFirstCall(spec.Model, hold)
		}
		ex, b, closer, err := OpenExecutor(ctx, spec.Sandbox, workdir, id)
		if err != nil {
			return nil, err
		}
		closeExec = sync.OnceFunc(func() { _ = closer.Close() })
		defer closeExec()
		host, inside := childInside(b, os.Environ())
		exec, backend = withSessionEnv(sessionEnv{Executor: ex, host: host, inside: inside, session: id, token: token}), b
		spec.Policy.Exec = Capabilities(b)
	}
	// The token never reaches the model or the log in full, whatever a
	// command prints.
	redact := withToken(spec.Redact, token.Value())
	if spec.Announce != nil && backend != "" {
		spec.Announce(backend)
	}
	snaps, err := openSnapshots(spec, id, workdir)
	if err != nil {
		return nil, err
	}
	defer snaps.close()
	net := &netguard.Policy{Allow: spec.NetAllow, Domains: spec.NetDomains}
	if spec.Policy.Contract != nil {
		// The model states the task's contract with this tool; it is
		// offered whenever the session has a contract gate.
		spec.Tools = append(slices.Clip(spec.Tools), contract.Tool(spec.Policy.Contract))
		spec.Policy.Allowed = append(slices.Clip(spec.Policy.Allowed), contract.ToolName)
	}
	env := Env{Root: root, WorkDir: workdir, ReadLines: spec.ReadLines, Outbox: &mail.Outbox{}, Plan: plan.New(),
		Asker: spec.Asker, Net: net, Exec: exec, Redact: redact, Extra: spec.Tools,
		Protected: spec.Policy.Protected, Quarantine: quarantineDir(spec, id),
		Staging: staging(spec, snaps)}
	reg, err := Tools(env)
	if err != nil {
		return nil, err
	}
	if err := reg.CheckNames(spec.Policy.Allowed); err != nil {
		return nil, fmt.Errorf("allowlist: %w", err)
	}
	var dg *drift.Gate
	if spec.Drift {
		dg = drift.New(spec.Task)
		spec.Policy.Drift = dg
	}
	// The data-flow gate judges by what the loop tells this ledger.
	var prov agent.Provenance
	if spec.Policy.Flow != "off" {
		if spec.Policy.Provenance == nil {
			spec.Policy.Provenance = flow.NewLedger()
		}
		prov = spec.Policy.Provenance
	}
	spec.Policy.Lookup = reg.Lookup
	gates, err := Gates(spec.Policy, workdir, net)
	if err != nil {
		return nil, err
	}
	// One intake boundary for the session's life: a resumed session wraps
	// with the one its start record holds.
	boundary := ""
	if spec.Resume != nil {
		boundary = spec.Resume.Boundary
	}
	if boundary == "" {
		if boundary, err = intake.NewBoundary(); err != nil {
			return nil, err
		}
	}
	wrap := intake.Wrapper{Boundary: boundary}
	meta, err := json.Marshal(sessionMeta{Settings: spec.Meta, Sandbox: backend, Token: token.Masked(), Boundary: boundary})
	if err != nil {
		return nil, fmt.Errorf("encode configuration: %w", err)
	}
	dir := spec.AuditDir
	if dir == "" {
		if dir, err = audit.DefaultDir(); err != nil {
			return nil, err
		}
	}
	if err := checkOutside(workdir, "audit dir", dir, "choose another with --audit-dir or audit.dir in your config"); err != nil {
		return nil, err
	}
	opts := []audit.Option{audit.WithDurability(spec.Durability), audit.WithRedactor(redact)}
	if spec.Observe != nil {
		opts = append(opts, audit.WithObserver(spec.Observe))
	}
	var log *audit.Writer
	if spec.Resume != nil {
		log = spec.Resume.Log
		for _, o := range opts {
			o(log)
		}
	} else if log, err = audit.Create(dir, id, opts...); err != nil {
		return nil, err
	}
	elog.attach(log)
	for _, l := range spec.Egress {
		l.attach(log)
	}
	loop, err := agent.New(agent.Config{
		Model:            spec.Model,
		Tools:            reg,
		Gates:            gates,
		Limits:           spec.Limits,
		Audit:            log,
		Meta:             meta,
		Session:          id,
		Snapshots:        snaps,
		Redact:           redact,
		Intake:           wrap,
		Provenance:       prov,
		Price:            spec.Price,
		Ledger:           spec.Ledger,
		MaxContextTokens: spec.MaxContextTokens,
		System:           spec.System,
	})
	if err != nil {
		return nil, errors.Join(err, log.Close())
	}
	turnCtx := spec.TurnContext
	if turnCtx == nil || spec.Next == nil {
		turnCtx = func(ctx context.Context, _ int) (context.Context, context.CancelFunc) { return ctx, func() {} }
	}
	turn := 1
	if r := spec.Resume; r != nil && r.Message != "" {
		turn = len(r.Goals) + 2 // the turns of the conversation so far, then this one
	}
	tctx, done := turnCtx(ctx, turn)
	var res agent.Result
	if r := spec.Resume; r != nil {
		st := r.State
		if dg != nil {
			for _, g := range r.Goals {
				dg.AddGoal(g)
			}
		}
		if r.Message != "" {
			if dg != nil {
				dg.AddGoal(r.Message)
			}
			st = resumedTurn(st, r.Ended, redact(r.Message), wrap)
		}
		res = loop.Resume(tctx, st)
	} else {
		res = loop.Run(tctx, spec.Task)
	}
	done()
	for spec.Next != nil && !TurnEnded(ctx, res) {
		msg, ok := spec.Next(ctx, res)
		if !ok {
			break
		}
		if dg != nil {
			dg.AddGoal(msg)
		}
		turn++
		tctx, done = turnCtx(ctx, turn)
		res = loop.Resume(tctx, nextTurn(res, redact(msg), wrap))
		done()
	}
	closeExec()
	for _, l := range spec.Egress {
		l.drain()
	}
	if err := log.Close(); err != nil && res.Err == nil {
		res.Stop, res.Err = agent.StopError, fmt.Errorf("close the audit log: %w", err)
	}
	out := &Outcome{
		Result: res, Outbox: env.Outbox.Messages(), Todos: env.Plan.Todos(), Session: id, Audit: log.Path(),
	}
	out.Changed = snaps.changed()
	out.RollbackDir = snaps.dir
	out.Unsaved, out.Unsettled = snaps.counts()
	return out, nil
}

// sessionMeta is recorded at session start: the caller's settings and the
// sandbox commands run in ("none" when the user chose to run unsandboxed,
// "unavailable" when there was none and commands are refused).
type sessionMeta struct {
	Settings any    `json:"settings,omitempty"`
	Sandbox  string `json:"sandbox,omitempty"`
	// Token is the session token commands get, masked (secret.Mask).
	Token string `json:"session_token,omitempty"`
	// Boundary is the session's intake boundary (intake.Wrapper), which a
	// resumed session must wrap with again.
	Boundary string `json:"intake_boundary,omitempty"`
}

// withToken returns redact, also replacing the session token.
func withToken(redact func(string) string, token string) func(string) string {
	return func(s string) string {
		if strings.Contains(s, token) {
			s = strings.ReplaceAll(s, token, "[REDACTED:REIN_SESSION_TOKEN]")
		}
		if redact != nil {
			s = redact(s)
		}
		return s
	}
}

// nextTurn is where a conversation stands when the user says msg after a
// turn that ended as res: the conversation so far and the user's message
// (marked as the user's input, like the first task), with what was used
// counted on. After a turn that ended early (cancelled, a per-turn cap, a
// failed model call) the model is told how it ended, and the calls of its
// last message that have no result are answered as not known to have run
// (agent.NextTurn): every request stays well formed, and the model does
// not take an unfinished turn for a finished one.
func nextTurn(res agent.Result, msg string, wrap intake.Wrapper) agent.State {
	return agent.State{
		Messages: agent.NextTurn(res.Messages, res.Answered, turnEnd(res), wrap.Task(msg)),
		Used:     budget.Used{Steps: res.Steps, ToolCalls: res.ToolCalls, Usage: res.Usage, Tokens: res.Tokens, CostUSD: res.CostUSD},
		Note:     "the user said: " + msg,
		Turn:     true,
		Message:  msg,
	}
}

// turnEnd says why a turn that ended as res ended early; "" when it ended
// done. A conversation rebuilt from its log says the same (resume.Read).
func turnEnd(res agent.Result) string {
	if res.Stop == agent.StopDone {
		return ""
	}
	why := string(res.Stop)
	if res.Err != nil {
		why += ": " + res.Err.Error()
	}
	return why
}

// resumedTurn is where a conversation rebuilt from its audit log stands
// when the user says msg (Resumed.Message): its last turn closed as
// nextTurn closes it live (the answers the log has, the other calls
// answered as not known to have run; State.Pending is not run) and the
// user's message.
func resumedTurn(st agent.State, ended, msg string, wrap intake.Wrapper) agent.State {
	return agent.State{
		Messages: agent.NextTurn(st.Messages, st.Settled, ended, wrap.Task(msg)),
		Used:     st.Used,
		Note:     "the user said: " + msg,
		Turn:     true,
		Message:  msg,
		Raw:      st.Raw,
	}
}

// TurnEnded reports whether a conversation must end after a turn that
// ended as res: its session's ctx is done (the whole session aborted), or
// the turn stopped for a reason no next turn escapes (the conversation's
// token or cost cap, an audit log that cannot be written). A turn that
// ended done, was cancelled on its own, or stopped at a per-turn cap
// (steps, tool calls, wall time) or a failed model call ends only itself.
func TurnEnded(ctx context.Context, res agent.Result) bool {
	if ctx.Err() != nil {
		return true
	}
	switch res.Stop {
	case agent.StopDone, agent.StopMaxSteps, agent.StopTimeout, agent.StopAborted:
		return false
	case agent.StopBudget:
		var ex *budget.ExceededError
		return !errors.As(res.Err, &ex) || (ex.Limit != budget.Steps && ex.Limit != budget.ToolCalls)
	case agent.StopError:
		return !errors.Is(res.Err, agent.ErrModelCall)
	}
	return true
}
