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
// gates allow (mode, rules, allowlist, limits, approver); only NoDrift and
// Flow "off" remove a gate, as their config settings do for the CLI.
//
// Not yet the CLI's: `rein run` also records its configuration in the
// session's start record, runs --sandbox none commands under its reaper
// (the rein binary), resumes interrupted sessions and holds conversations;
// it still builds its sessions with internal/harness directly.
package guarded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/prompt"
	"github.com/reinhq/rein/secret"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
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
	// only where the network gate allows). They are allowlisted.
	Tools []tool.Tool
	// OnlyTools offers the model only Tools, none of the built-in ones.
	OnlyTools bool
	// Allow is the allowlist of built-in tools offered to the model; nil is
	// the CLI's default (config.DefaultTools). Tools are always added.
	Allow []string
	// Mode is the permission mode (permission.Default when empty): what
	// runs without a human's yes.
	Mode permission.Mode
	// Rules are permission rules, checked before the mode.
	Rules []permission.Rule
	// ToolLimits caps calls per tool for the session (gate.NewLimit);
	// irreversible tools have gate.DefaultIrreversible when not named.
	ToolLimits map[string]int
	// Limits is the session's budget; the zero value is budget.Defaults().
	Limits budget.Limits
	// Approver says yes or no when a gate asks; nil refuses every ask
	// (approve.Deny), as the CLI does with no terminal.
	Approver approve.Approver
	// Asker answers the model's ask_question; nil means nobody answers.
	Asker approve.Asker
	// Flow is what the data-flow gate does when a side-effecting call
	// carries a value a tool result supplied: "ask" (also ""), "deny" or
	// "off".
	Flow string
	// NoDrift removes the intent-drift gate (the CLI always has it).
	NoDrift bool
	// AuditDir is where the audit log goes; empty is audit.DefaultDir().
	// It must be outside WorkDir.
	AuditDir string
	// Durability is how each audit record is made durable; the zero value
	// is the CLI's default.
	Durability audit.Durability
	// RollbackDir is where file snapshots go before a tool changes a file;
	// empty is rollback's default directory.
	RollbackDir string
	// Sandbox is the backend commands run in: "auto" (also ""), "landlock",
	// "docker" or "none" (unsandboxed, with the caller's rights).
	Sandbox string
	// Image is the container image for the docker backend.
	Image string
	// Environ is the environment whose secret-looking values are redacted
	// from what the model and the audit log see; nil is os.Environ().
	Environ []string
	// NetAllow lists the internal hosts webfetch may reach.
	NetAllow []string
	// MaxContextTokens compacts the conversation near this many tokens (0:
	// never).
	MaxContextTokens int64
	// Price is the cost of one call's usage in USD; nil tracks no cost.
	Price func(model.Usage) float64
	// System replaces rein's system prompt (prompt.System()) when set.
	System string
	// Observe sees every audit record as it is written.
	Observe func(audit.Record)
	// Events, when set, are told of each step in typed form.
	Events *Events
}

// Session is one guarded session, ready to run once.
type Session struct {
	spec harness.Spec
	ran  bool
}

// New checks opts and prepares a session. Nothing is written until Run.
func New(ctx context.Context, opts Options) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
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
	allow := opts.Allow
	if allow == nil {
		allow = config.DefaultTools()
	}
	if opts.OnlyTools {
		allow = nil
	}
	allow = slices.Clone(allow)
	for _, t := range opts.Tools {
		allow = append(allow, t.Spec().Name)
	}
	limits := opts.Limits
	if limits == (budget.Limits{}) {
		limits = budget.Defaults()
	}
	var approver approve.Approver = approve.Deny{}
	if opts.Approver != nil {
		approver = opts.Approver
	}
	if opts.Events != nil && (opts.Events.ApprovalAsked != nil || opts.Events.ApprovalAnswered != nil) {
		approver = watched{Approver: approver, e: opts.Events}
	}
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	system := opts.System
	if system == "" {
		system = prompt.System()
	}
	if err := secret.CheckPrompt(system, secret.Names(environ)); err != nil {
		return nil, fmt.Errorf("guarded: %w", err)
	}
	return &Session{spec: harness.Spec{
		ID: session.NewID(time.Now()), Model: opts.Model, WorkDir: dir, Tools: opts.Tools,
		Policy: harness.Policy{Allowed: allow, Mode: opts.Mode, Rules: opts.Rules, ToolLimits: opts.ToolLimits,
			Approver: approver, Flow: opts.Flow},
		Asker: opts.Asker, NetAllow: opts.NetAllow, Limits: limits,
		AuditDir: opts.AuditDir, Durability: opts.Durability, RollbackDir: opts.RollbackDir,
		Sandbox: harness.Sandbox{Backend: opts.Sandbox, Image: opts.Image},
		Redact:  secret.NewRedactor(environ).Redact, System: system,
		Price: opts.Price, MaxContextTokens: opts.MaxContextTokens, Drift: !opts.NoDrift,
		Observe: opts.Events.observer(opts.Observe),
	}}, nil
}

// ID is the session's id: its audit log and rollback snapshots are named by it.
func (s *Session) ID() string { return s.spec.ID }

// Result is what a session did.
type Result struct {
	agent.Result
	// Changed lists the files the session's tools changed, each saved for
	// rollback first.
	Changed []string
	// Audit is the audit log's path.
	Audit string
}

// Run runs the session on task. A session runs once; the error of a
// session that could not start (unwritable audit dir, no sandbox asked
// for) is in Result.Err with Stop agent.StopError.
func (s *Session) Run(ctx context.Context, task string) Result {
	if s.ran {
		return Result{Result: agent.Result{Stop: agent.StopError, Err: errors.New("guarded: a session runs once")}}
	}
	s.ran = true
	spec := s.spec
	spec.Task = task
	out, err := harness.Run(ctx, spec)
	if err != nil {
		return Result{Result: agent.Result{Stop: agent.StopError, Err: fmt.Errorf("guarded: start: %w", err)}}
	}
	return Result{Result: out.Result, Changed: out.Changed, Audit: out.Audit}
}

// Close releases the session. Run already closes what it opened (sandbox,
// audit log, snapshots); Close is there so an embedder's defer stays right
// when a later version holds resources between New and Run.
func (s *Session) Close() error { return nil }
