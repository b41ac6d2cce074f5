// Package guarded builds a rein session with every guard `rein run` has:
// the gate pipeline in its fixed order (availability, validation, scope,
// existence, shell, network, data flow, confirm, limit, intent drift,
// permission, then approval), the strongest sandbox that works here
// (landlock, else docker with an image; none: commands are refused),
// rollback snapshots, the audit log, redaction of the environment's secrets,
// the intake wrapper around everything from outside, provenance for the
// data-flow gate, rein's system prompt and a fresh session id.
//
// Three lines give an embedder what the CLI gives:
//
//	s, err := guarded.New(ctx, guarded.Options{WorkDir: dir, Model: m, Tools: mytools})
//	defer s.Close()
//	res := s.Run(ctx, task)
//
// The zero value of every option is the CLI's default. Options tune what the
// gates allow (mode, rules, allowlist, limits, approver); only NoDrift, Flow
// "off", NoRollback and Sandbox.Backend "none" remove a guard, as their
// settings do for the CLI, and each says so.
//
// This is the CLI's own assembly: `rein run`, `rein` (the conversation) and
// `rein resume` build their sessions with New and run them with Run, Chat
// and Resume; `rein demo` runs its scenarios through it with their own
// tools; `rein policy check` judges calls with Pipeline and `rein sandbox
// exec` runs a command with OpenSandbox.
package guarded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/contract"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/prompt"
	"github.com/reinhq/rein/protect"
	"github.com/reinhq/rein/secret"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/mail"
	"github.com/reinhq/rein/tool/plan"
)

// Options configure a session. Only WorkDir and Model are required.
type Options struct {
	// WorkDir is the directory the session works in: the file tools are
	// rooted there, the shell runs there, the scope gate keeps writes in
	// it. Required; made absolute.
	WorkDir string
	// Model is the model the session talks to. Required.
	Model model.Model
	// Tools are the caller's own tools, added to the built-in coding tools
	// (or, with OnlyTools, instead of them on the allowlist). Each passes
	// the same gates as a built-in one: by its spec's effect class (an
	// irreversible tool needs a human's yes and is capped per session) and
	// its argument roles (a path argument is scoped, a URL one is fetched
	// only where the network gate allows). They are allowlisted unless
	// ExactAllow is set.
	Tools []tool.Tool
	// Egress are the logs of egress proxies started before the session for
	// its tools (the MCP servers' sandbox: set a proxy's
	// egress.Config.Record to an EgressLog's Record): their connections are
	// written to the session's audit log once it is open.
	Egress []*EgressLog
	// OnlyTools offers the model only Tools, none of the built-in ones.
	OnlyTools bool
	// Allow is the allowlist of built-in tools offered to the model; nil is
	// the CLI's default (config.DefaultTools()). Tools are always added,
	// unless ExactAllow is set.
	Allow []string
	// ExactAllow makes Allow the whole allowlist: Tools are registered but
	// only those Allow names are offered (a call to another is refused by
	// the availability gate, as a built-in tool not on the allowlist is).
	// For roles that hold some of a set of tools. Default false. It only
	// narrows what runs; with OnlyTools it offers nothing.
	ExactAllow bool
	// Mode is the permission mode (permission.Default when empty): what
	// runs without a human's yes.
	Mode permission.Mode
	// Rules are permission rules, checked before the mode.
	Rules []permission.Rule
	// ToolLimits caps calls per tool for the session (gate.NewLimit);
	// irreversible tools have gate.DefaultIrreversible when not named.
	ToolLimits map[string]int
	// Protected are the paths a write asks about in every mode and no
	// shell command may change (code that runs later: hooks, CI files);
	// nil is the built-in list (protect.Default()), never none. The CLI
	// passes config's protect list.
	Protected *protect.List
	// Limits is the session's budget; the zero value is budget.Defaults().
	Limits budget.Limits
	// Approver says yes or no when a gate asks; nil refuses every ask
	// (approve.Deny), as the CLI does with no terminal. An approver that
	// is an approve.Chooser (the terminal) may answer for the session or
	// for good; the pipeline then keeps session rules.
	Approver approve.Approver
	// RuleSaver saves "always" answers as rules in the user's config
	// (config.UserRules); nil keeps them for the session only.
	RuleSaver gate.RuleSaver
	// Asker answers the model's ask_question; nil means nobody answers.
	Asker approve.Asker
	// TurnContext, when set, gives each turn of a conversation (Chat; the
	// first turn is 1) its own context derived from the session's, so that
	// cancelling it (agent.WithAbort) aborts that turn only and the
	// conversation goes on. Nil runs every turn under the session's.
	TurnContext func(ctx context.Context, turn int) (context.Context, context.CancelFunc)
	// Flow is what the data-flow gate does when a side-effecting call
	// carries a value a tool result supplied: "ask" (also ""), "deny" or
	// "off". "off" removes the gate.
	Flow string
	// NoDrift removes the intent-drift gate (the CLI always has it).
	NoDrift bool
	// ReadLines is how many lines read_file returns when the model gives
	// no limit; 0 is its default (2000, also the most).
	ReadLines int
	// AuditDir is where the audit log goes; empty is audit.DefaultDir().
	// It must be outside WorkDir.
	AuditDir string
	// Durability is how each audit record is made durable; the zero value
	// is the CLI's default.
	Durability audit.Durability
	// Meta is recorded in the session's start record (under "meta",
	// "settings") as the caller's effective configuration; the CLI records
	// its flags and config there, and rein resume reads them back. Nil
	// records none.
	Meta any
	// RollbackDir is where file snapshots go before a tool changes a file;
	// empty is rollback's default directory. It must be outside WorkDir.
	RollbackDir string
	// NoRollback keeps no snapshots: a changed file cannot be restored.
	// It removes rollback; for a throwaway work dir (rein demo's). Default
	// false.
	NoRollback bool
	// Sandbox is where commands run; the zero value is the CLI's default
	// (the strongest backend that works here).
	Sandbox Sandbox
	// Announce, when set, is told the sandbox chosen ("landlock", "docker",
	// "podman", "none", or "unavailable" when nothing works and commands
	// are refused) before the session starts, when run_bash is offered.
	// The CLI warns loudly there about "none".
	Announce func(backend string)
	// Environ is the environment whose secret-looking values are redacted
	// from what the model and the audit log see; nil is os.Environ().
	Environ []string
	// NetAllow lists the internal hosts webfetch may reach.
	NetAllow []string
	// NetDomains, when set, are the only hosts webfetch may fetch from
	// ([network] domains: "example.org", "*.example.net:443").
	NetDomains []string
	// MaxContextTokens compacts the conversation near this many tokens (0:
	// never).
	MaxContextTokens int64
	// Price is the cost of one call's usage in USD; nil tracks no cost.
	Price func(model.Usage) float64
	// Ledger, when set, is a budget shared with other sessions (rein
	// serve's): every model call is reserved there first and settled
	// after (agent.Config.Ledger). Nil: the session's own Limits only.
	Ledger agent.Ledger
	// System replaces rein's system prompt (prompt.System()) when set.
	// It is refused when it interpolates or names a secret-looking
	// environment variable (secret.CheckPrompt).
	System string
	// NoSystem sends no system prompt at all (rein demo's scripted
	// scenarios). Default false: rein's, or System.
	NoSystem bool
	// Observe sees every audit record as it is written.
	Observe func(audit.Record)
	// Events, when set, are told of each step in typed form.
	Events *Events
	// Contract, when set, is the session's task contract holder
	// (gate/contract): the model may state the task's side effects with
	// propose_contract, the user approves them with one question, and
	// then calls inside the contract run without asking while
	// side-effecting calls outside it are refused. A holder may come with
	// a contract already approved (rein run --contract FILE). Nil: no
	// contract gate (unless Unattended).
	Contract *contract.Holder
	// Unattended is for runs nobody watches (cron, CI): every question is
	// No at once, whatever Approver is, and only a contract in force (given
	// in Contract) authorises side effects. Default false.
	Unattended bool
}

// The sandbox backends a session can ask for (Sandbox.Backend).
const (
	SandboxAuto     = "auto"     // the strongest that works here: landlock, else docker (with an image)
	SandboxLandlock = "landlock" // Landlock + seccomp + namespaces around each command
	SandboxDocker   = "docker"   // a container per session (podman: Runtime "podman")
	SandboxNone     = "none"     // commands run with the caller's rights: only when asked for
)

// Sandbox is where a session's commands run. The zero value is the CLI's
// default: landlock when the kernel has it, else docker when Image is set,
// else no sandbox, and then every command is refused (fail closed).
type Sandbox struct {
	// Backend is "auto" (also ""), "landlock", "docker" or "none". "none"
	// removes the sandbox: commands run with the caller's rights. A
	// backend asked for by name that does not work here fails the start.
	Backend string
	// Image is the container image for docker; it is never pulled.
	Image string
	// Runtime is the container runtime: "docker" (also "") or "podman".
	Runtime string
	// Memory is each command's memory limit, like "2GiB" or "none"; ""
	// is sandbox.DefaultMemory.
	Memory string
	// Helper is the path of a binary whose main hands its helper
	// invocation to sandbox.HelperMain (the CLI passes rein-helper, or
	// the rein binary). The landlock backend re-executes it to confine
	// each command (empty: this program). With Backend "none", each
	// command runs under it as a reaper, which kills everything the
	// command started when it ends or the caller dies; empty: no reaper,
	// the command's process group is killed, and a process that left its
	// group can outlive the session.
	Helper string
	// NoStage runs landlock commands unstaged (their writes are not
	// judged after the fact nor saved for rollback); StageAskAbove is how
	// many files one command may change or delete before rein asks (0:
	// 20). See bash.Staging.
	NoStage       bool
	StageAskAbove int
	// Egress, with a non-empty allowlist, lets landlock commands reach
	// the hosts on it through rein's egress proxy (package egress; config
	// [sandbox.network]), each connection recorded in the audit log. It
	// needs root; docker containers keep no network. Nil: no network.
	Egress *egress.Config
	// OneShot opens the sandbox for a single command (OpenSandbox for
	// `rein sandbox exec`): landlock starts no zygote for later commands.
	OneShot bool
	// Warm starts the landlock sandbox's zygote when the session opens,
	// so that its first command does not wait for it (the CLI's run and
	// chat); a session that may sit idle (rein serve) leaves it off.
	Warm bool
}

func (s Sandbox) harness() harness.Sandbox {
	return harness.Sandbox{Backend: s.Backend, Image: s.Image, Runtime: s.Runtime, Memory: s.Memory, Helper: s.Helper,
		NoStage: s.NoStage, StageAskAbove: s.StageAskAbove, Egress: s.Egress, OneShot: s.OneShot, Warm: s.Warm}
}

// Session is one guarded session, ready to run once.
type Session struct {
	spec harness.Spec
	ran  bool
}

// New checks opts and prepares a session. Nothing is written until it runs.
//
// ctx is not kept: a session whose run's context is already cancelled
// starts, records its stop as aborted and ends, as `rein run` does on an
// early Ctrl-C.
func New(_ context.Context, opts Options) (*Session, error) {
	if opts.Model == nil {
		return nil, errors.New("guarded: Options.Model is required")
	}
	if opts.WorkDir == "" {
		return nil, errors.New("guarded: Options.WorkDir is required")
	}
	dir, err := filepath.Abs(opts.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("guarded: work dir: %w", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("guarded: work dir %s is not a directory", dir)
	}
	limits := opts.Limits
	if limits == (budget.Limits{}) {
		limits = budget.Defaults()
	}
	var approver approve.Approver = approve.Deny{}
	if opts.Approver != nil && !opts.Unattended {
		approver = opts.Approver
	}
	if opts.Events != nil && (opts.Events.ApprovalAsked != nil || opts.Events.ApprovalAnswered != nil) {
		w := watched{Approver: approver, e: opts.Events}
		approver = w
		if c, ok := w.Approver.(approve.Chooser); ok {
			approver = watchedChooser{watched: w, c: c} // keeps the answers that stick
		}
	}
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	system := opts.System
	switch {
	case opts.NoSystem:
		system = ""
	case system == "":
		system = prompt.System()
	}
	if err := secret.CheckPrompt(system, secret.Names(environ)); err != nil {
		return nil, fmt.Errorf("guarded: %w", err)
	}
	return &Session{spec: harness.Spec{
		ID: session.NewID(time.Now()), Model: opts.Model, WorkDir: dir, Tools: opts.Tools, ReadLines: opts.ReadLines,
		Policy: policy(opts, approver),
		Asker:  opts.Asker, NetAllow: opts.NetAllow, NetDomains: opts.NetDomains, Limits: limits,
		AuditDir: opts.AuditDir, Durability: opts.Durability, RollbackDir: opts.RollbackDir, NoRollback: opts.NoRollback,
		Meta: opts.Meta, Sandbox: opts.Sandbox.harness(), Announce: opts.Announce,
		Redact: secret.NewRedactor(environ).Redact, System: system,
		Price: opts.Price, Ledger: opts.Ledger, MaxContextTokens: opts.MaxContextTokens, Drift: !opts.NoDrift,
		Observe: opts.Events.observer(opts.Observe), TurnContext: opts.TurnContext, Egress: opts.Egress,
	}}, nil
}

// EgressLog takes an egress proxy's connections (its Record) for a
// session's audit log (Options.Egress); Who, when set, names who made them
// in each record's tool field.
type EgressLog = harness.EgressLog

// ID is the session's id: its audit log and rollback snapshots are named
// by it. After Resume it is the resumed session's.
func (s *Session) ID() string { return s.spec.ID }

// Result is what a session did.
type Result struct {
	agent.Result
	// Session is the session's id.
	Session string
	// Changed lists the files the session's tools changed, each saved for
	// rollback first, in order.
	Changed []string
	// RollbackDir is where the snapshots are ("" with NoRollback).
	RollbackDir string
	// Unsaved counts the calls refused because the rollback store could
	// not be written (full, read-only); Unsettled, the calls whose result
	// the store could not record. The CLI exits 1 on either.
	Unsaved, Unsettled int
	// Outbox is what send_email sent.
	Outbox []mail.Message
	// Todos is the plan the model kept with the planning tools.
	Todos []plan.Todo
	// Audit is the audit log's path.
	Audit string
}

// StartError is the error in Result.Err of a session that could not start
// (bad options, an unwritable audit dir, a sandbox asked for that does not
// work here): nothing ran. Its Stop is agent.StopError.
type StartError struct{ Err error }

func (e *StartError) Error() string { return "guarded: start: " + e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Run runs the session on task. A session runs once (Run, Chat or Resume);
// the error of a session that could not start is a *StartError in
// Result.Err, with Stop agent.StopError.
func (s *Session) Run(ctx context.Context, task string) Result {
	return s.Chat(ctx, task, nil)
}

// Chat holds a conversation of turns: the loop runs on first; each time a
// turn ends, next gets its result and returns the user's next message, and
// the loop goes on with the whole conversation so far, in the same audit
// log and under the same gates (the intent-drift gate counts each message
// of the user's as part of the task). The step, tool-call and wall-time
// caps apply to each turn, the token and cost caps to the conversation. A
// turn that was cancelled (Options.TurnContext), reached a per-turn cap or
// whose model call failed ends only itself; next's ok false, the session's
// context done, or a stop no turn escapes (TurnEnded: the token or
// cost cap, a log that cannot be written) ends the session. A nil next is
// Run.
func (s *Session) Chat(ctx context.Context, first string, next func(ctx context.Context, res agent.Result) (msg string, ok bool)) Result {
	spec := s.spec
	spec.Task, spec.Next = first, next
	return s.start(ctx, spec)
}

// Resumed is an interrupted session to continue (what `rein resume` reads
// from a session's audit log).
type Resumed struct {
	// Log is the session's own log, opened with audit.Append (which holds
	// the session's lock); the session closes it.
	Log *audit.Writer
	// Task is the session's task, from its start record.
	Task string
	// State is where the session stood: its conversation, what it used,
	// the calls to run again and those settled.
	State agent.State
	// Boundary is the session's intake boundary, from its start record
	// (meta "intake_boundary"); empty makes a new one.
	Boundary string
	// Goals are the user's later messages of a conversation, from its log
	// (resume.Point.Goals): the intent-drift gate counts them as part of
	// the task, as it did live.
	Goals []string
	// Message, when set, goes on with a conversation (rein chat --resume)
	// instead of the interrupted turn: its last turn is closed as a live
	// conversation closes it (Ended says why it ended early, "" when it
	// ended done; resume.Point.Ended), and the user's message begins a new
	// turn. Next then holds the conversation on, as Chat's next does.
	Message string
	Ended   string
	Next    func(ctx context.Context, res agent.Result) (msg string, ok bool)
}

// Resume continues the interrupted session r instead of starting one: in
// its log, under its id, from where it stood, with the gates and sandbox
// of opts (which should be the session's own, from its start record). With
// r.Message it goes on with a conversation instead (Resumed.Message).
func (s *Session) Resume(ctx context.Context, r Resumed) Result {
	spec := s.spec
	if r.Log == nil {
		return s.fail(errors.New("guarded: Resumed.Log is required"))
	}
	spec.Task = r.Task
	spec.ID = r.Log.Session()
	s.spec.ID = spec.ID
	spec.Resume = &harness.Resumed{Log: r.Log, State: r.State, Boundary: r.Boundary, Goals: r.Goals}
	if r.Message != "" {
		spec.Resume.Message, spec.Resume.Ended, spec.Next = r.Message, r.Ended, r.Next
	}
	return s.start(ctx, spec)
}

func (s *Session) fail(err error) Result {
	return Result{Session: s.spec.ID, Result: agent.Result{Stop: agent.StopError, Err: &StartError{Err: err}}}
}

func (s *Session) start(ctx context.Context, spec harness.Spec) Result {
	if s.ran {
		return s.fail(errors.New("a session runs once"))
	}
	s.ran = true
	out, err := harness.Run(ctx, spec)
	if err != nil {
		return s.fail(err)
	}
	return Result{Result: out.Result, Session: out.Session, Changed: out.Changed, RollbackDir: out.RollbackDir,
		Unsaved: out.Unsaved, Unsettled: out.Unsettled, Outbox: out.Outbox, Todos: out.Todos, Audit: out.Audit}
}

// Close releases the session. Run already closes what it opened (sandbox,
// audit log, snapshots); Close is there so an embedder's defer stays right
// when a later version holds resources between New and Run.
func (s *Session) Close() error { return nil }

// TurnEnded reports whether a conversation (Chat) must end after a turn
// that ended as res, with ctx the session's context: the session aborted,
// the token or cost cap reached, or a log that cannot be written. A turn
// done, cancelled on its own, stopped at a per-turn cap or by a failed
// model call ends only itself.
func TurnEnded(ctx context.Context, res agent.Result) bool { return harness.TurnEnded(ctx, res) }
