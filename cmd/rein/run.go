package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/eval"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/contract"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/internal/tui"
	"github.com/reinhq/rein/mcp"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/anthropic"
	"github.com/reinhq/rein/model/openai"
	"github.com/reinhq/rein/model/scripted"
	"github.com/reinhq/rein/price"
	"github.com/reinhq/rein/prompt"
	"github.com/reinhq/rein/serve"
	"github.com/reinhq/rein/session/rollback"
	"github.com/reinhq/rein/telemetry"
	"github.com/reinhq/rein/tool"
)

type runCmd struct {
	Task            string `arg:"" help:"The task, in words."`
	Expect          string `placeholder:"NUMBER" help:"Ground truth: the answer passes when it contains this number (compared as a number) and the run ended done."`
	RollbackOnAbort bool   `name:"rollback-on-abort" help:"When the run is aborted (Ctrl-C, SIGTERM), undo its file changes without asking."`
	Unattended      bool   `help:"Nobody will answer (cron, CI): every question is No at once, even at a terminal, and only the task contract given with --contract authorises side effects (also permissions.unattended in config)."`
	Contract        string `placeholder:"FILE" help:"The task contract, approved in advance: the side effects the task may have (docs/contract.md). Calls inside it run without asking; side effects outside it are refused. The model may also propose one (propose_contract), which asks you once."`
	agentFlags      `embed:""`
}

// agentFlags are the flags of every command that runs the agent: rein run
// and the conversation (rein with no command).
type agentFlags struct {
	Model           string                 `placeholder:"PROVIDER:MODEL" help:"The model: anthropic:MODEL, openai:MODEL (also any OpenAI-compatible server, with --base-url), or scripted:PATH to play a script file (docs/script-format.md). Default: $REIN_MODEL, else model.default from the project's or your config."`
	Tools           []string               `sep:"," placeholder:"TOOL" help:"Allowlist: the only tools the model sees and may call (default tools.allow from config, else every built-in tool but send_email; see rein tools)."`
	Mode            string                 `placeholder:"MODE" help:"Permission mode: default (reads and planning run, the rest asks), accept-edits (file edits run too), plan (read-only), bypass (what the hard gates allow runs; what they would ask about is refused). Default: permissions.mode from config, else default."`
	Workdir         string                 `default:"." placeholder:"DIR" help:"Work directory: the file tools and the shell see it and nothing outside it."`
	MaxSteps        capFlag[int]           `placeholder:"N|none" help:"Stop after N model calls (default 40; none for no cap; 0 is refused)."`
	MaxToolCalls    capFlag[int]           `placeholder:"N|none" help:"Stop when the model asks for more than N tool calls (default 200; none for no cap; 0 is refused)."`
	MaxTokens       capFlag[int64]         `placeholder:"N|none" help:"Stop when more than N tokens were used (default 200000; none for no cap; 0 is refused)."`
	MaxCostUSD      capFlag[float64]       `name:"max-cost-usd" placeholder:"USD|none" help:"Stop with stop reason budget when the session cost more than this (default 5; none for no cap; 0 is refused). Prices come from the config's [prices] table; a model without a price is not tracked, and the scripted model costs nothing."`
	Timeout         capFlag[time.Duration] `placeholder:"DURATION|none" help:"Stop after this wall time, like 90s or 30m (default 30m; none for no cap; 0 is refused)."`
	ReadLines       *int                   `placeholder:"N" help:"Lines read_file returns when the model gives no limit (default 2000, at most 2000)."`
	JSON            bool                   `name:"json" help:"Print one JSON event per line (text, tool_call, verdict, result, stop), then one final JSON object."`
	AuditDir        string                 `placeholder:"DIR" help:"Directory for the audit log (default audit.dir from config, else $XDG_STATE_HOME/rein/audit)."`
	Config          string                 `placeholder:"FILE" help:"A config file applied after ~/.config/rein/config.toml and DIR/.rein/config.toml."`
	Durability      string                 `placeholder:"LEVEL" help:"Audit durability: fsync (the default: before every side effect and at the stop, every record so far is on disk) or flush (handed to the OS: survives a crash of rein, not of the machine)."`
	Sandbox         string                 `placeholder:"BACKEND" help:"Where commands run: auto (the strongest that works here: landlock, else docker with --image; with none working, commands are refused), landlock, docker, none (unsandboxed, only when asked for). Default: sandbox.backend from config, else auto."`
	Image           string                 `placeholder:"IMAGE" help:"Container image for --sandbox docker (never pulled)."`
	BaseURL         string                 `name:"base-url" placeholder:"URL" help:"The provider's API base URL (default ANTHROPIC_BASE_URL or OPENAI_BASE_URL, else the provider's own); a local OpenAI-compatible server needs no key. Keys come only from ANTHROPIC_API_KEY / OPENAI_API_KEY."`
	LLMTimeout      time.Duration          `name:"llm-timeout" default:"120s" help:"Timeout of one model call; the provider's SDK retries 429 and 5xx with backoff."`
	MaxContext      int64                  `name:"max-context-tokens" default:"150000" placeholder:"N" help:"Context budget: before a model call over 80% of it, the middle of the conversation is replaced by a summary (the task and the newest messages stay)."`
	Approvals       string                 `placeholder:"URL" help:"Send this run's questions to a running rein serve at URL (its page, its webhooks) instead of the terminal, and wait there up to --approval-timeout; no answer is No. Token from --approvals-token-file, else $REIN_APPROVALS_TOKEN. Default: approvals.url from your own config."`
	ApprovalsToken  string                 `name:"approvals-token-file" placeholder:"FILE" help:"File holding rein serve's bearer token, for --approvals (default approvals.token_file from your config)."`
	ApprovalTimeout time.Duration          `name:"approval-timeout" default:"60s" placeholder:"DURATION" help:"How long an approval prompt waits on the terminal; no answer in time is No. Without a terminal every approval is No."`
	OTLPEndpoint    string                 `name:"otlp-endpoint" placeholder:"URL" help:"Export the session as OpenTelemetry traces (invoke_agent, chat, execute_tool spans) over OTLP/HTTP to URL, like http://localhost:4318/v1/traces. Default: telemetry.otlp_endpoint from your own config, else none."`
	TraceContent    bool                   `name:"trace-content" help:"Add the redacted text the audit log holds (task, model text, arguments, results, answer) to the spans. Default: telemetry.content from your config, else off."`
}

// prepared is a session ready to build: its options (Meta holds its
// settings), how its cost is counted, and the human at the terminal.
type prepared struct {
	opts    guarded.Options
	meta    settings
	pricing pricing
	maxCost float64
	lines   *approve.Lines
	tty     bool // stdin is a terminal
	// asker answers ask_question when questions go to rein serve
	// (--approvals); nil: the terminal's, when there is one.
	asker approve.Asker
	// telemetry is where the session's traces go (empty: nowhere).
	telemetry telemetry.Config
	// styles, when set, colour the trace's approvals and refusals (rein
	// chat on a terminal).
	styles *tui.Styles
}

func (c *runCmd) Run(ctx context.Context, e env) error {
	if strings.TrimSpace(c.Task) == "" {
		return usagef("the task is empty: say what the agent should do, e.g. rein run --model scripted:script.json \"Read notes.txt and sum the amounts\"")
	}
	if c.Expect != "" {
		if _, err := eval.ParseExpected(c.Expect); err != nil {
			return usagef("--expect: %v", err)
		}
	}
	h, err := holderFor(c.Contract)
	if err != nil {
		return err
	}
	p, err := c.prepare(ctx, e)
	if err != nil {
		return err
	}
	// A terminal session: its sandbox starts while the model thinks about
	// its first turn (rein serve's idle sessions do not hold one).
	p.opts.Sandbox.Warm = true
	defer p.lines.Close()
	p.opts.Unattended = c.Unattended || p.meta.Config.Permissions.Unattended
	if p.opts.Unattended {
		p.meta.Config.Permissions.Unattended = true
		p.tty = false // nobody answers: no prompt, not even the rollback offer
	}
	if c.Contract != "" || p.opts.Unattended {
		// Only then is propose_contract offered: offering it in every run
		// changes the tools the model is shown, and with them the CLI's
		// golden outputs (tool lists, token estimates); docs/contract.md.
		p.opts.Contract = h
	}
	asker := askerFor(p, e, c.ApprovalTimeout)
	if p.opts.Unattended {
		asker = approve.Unanswered{}
	}
	mcpEgress := &guarded.EgressLog{Who: mcpEgressWho}
	p.opts.Egress = append(p.opts.Egress, mcpEgress)
	servers, closeServers, err := connectMCP(ctx, e, p.meta.Config, p.opts.WorkDir, asker, mcpEgress)
	if err != nil {
		return err
	}
	defer closeServers()
	p.meta.MCPUnsandboxed = unsandboxed(servers)
	p.opts.Tools = append(p.opts.Tools, servers.Tools()...)
	if p.opts.ExactAllow {
		p.opts.Allow = append(p.opts.Allow, servers.Names()...)
	}
	p.meta.Expect = c.Expect
	p.opts.Meta = p.meta
	out, err := runSession(ctx, e, p.opts, job{Task: c.Task, Expect: c.Expect}, c.JSON, true, p)
	if err != nil {
		return err
	}
	if out.Stop == agent.StopAborted && len(out.Changed) > 0 && out.RollbackDir != "" {
		offerRollback(e, p.lines, p.tty, out, c.RollbackOnAbort, c.JSON)
	}
	return exitCode(outcomeCode(out))
}

// holderFor is the task contract holder of rein run: with the contract
// of file in force when one is given (approved in advance by the user who
// gave it). A file that cannot be read or parsed is a usage error.
func holderFor(file string) (*contract.Holder, error) {
	h := contract.NewHolder(nil)
	if file == "" {
		return h, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, usagef("--contract %s: %v", file, errors.Unwrap(err))
	}
	ct, err := contract.Parse(data)
	if err != nil {
		return nil, usagef("--contract %s: %v; see docs/contract.md", file, err)
	}
	h.Approve(ct)
	return h, nil
}

// outcomeCode is the exit status of a session: its stop's, except that a
// session that ended done although changes could not be saved for
// rollback (a full or read-only store) exits 1, as an error of rein's:
// not a limit or a guard the user set (3), but a state directory that
// must be fixed before the session's work can be trusted to undo.
func outcomeCode(out *outcome) int {
	code := stopCode(out.Stop)
	if code == exitOK && out.Unsaved+out.Unsettled > 0 {
		return exitError
	}
	return code
}

// prepare checks the flags and the environment and builds the session's
// options: config, model, approver, secrets, price. Warnings go to stderr.
func (c *agentFlags) prepare(ctx context.Context, e env) (*prepared, error) {
	workdir, err := checkWorkdir(c.Workdir)
	if err != nil {
		return nil, err
	}
	if err := checkCredentialWorkdir(workdir, home()); err != nil {
		return nil, err
	}
	cfg, files, err := c.config(workdir)
	if err != nil {
		return nil, usageError{err}
	}
	c.Model = chooseModel(c.Model, cfg, os.Getenv)
	m, err := c.model()
	if err != nil {
		return nil, err
	}
	if err := preflight(ctx, c.Model, c.BaseURL, os.Getenv); err != nil {
		return nil, err
	}
	dir, err := auditDir(c.AuditDir, cfg)
	if err != nil {
		return nil, err
	}
	system := prompt.System()
	secretNames, err := startupChecks(e.stderr, os.Environ(), system)
	if err != nil {
		return nil, err
	}
	pr := pricingOf(cfg, c.Model)
	var charged *price.Price
	if pr.known {
		charged = &pr.price
	}
	lines := approve.NewLines(e.stdin)
	approver, tty := approverFor(e, lines, c.ApprovalTimeout, workdir)
	var asker approve.Asker
	if remote, err := c.remoteApprover(cfg); err != nil {
		return nil, err
	} else if remote != nil {
		approver, asker = remote, remote
	}
	var remoteLedger *serve.RemoteLedger
	if r, ok := approver.(*serve.Remote); ok {
		// A run that points at rein serve spends the server's budget: each
		// model call is reserved there first, over the same token.
		remoteLedger = &serve.RemoteLedger{URL: r.URL, Token: r.Token, Tenant: cfg.Budget.Tenant, Caps: cfg.Budget.Caps()}
	}
	durability, _ := cfg.Audit.Level() // validated by Load
	opts := optionsOf(cfg, approver)
	opts.Model, opts.WorkDir, opts.AuditDir, opts.Durability = m, workdir, dir, durability
	if saver, err := config.UserRules(workdir); err == nil {
		opts.RuleSaver = saver // "always" answers go to the user's config, never the project's
	}
	opts.Announce, opts.System, opts.Price, opts.MaxContextTokens = announce(e), system, pr.cost(), c.MaxContext
	if remoteLedger != nil {
		opts.Ledger = remoteLedger
	}
	// The model's ask_question reaches the person at the terminal; with
	// none, the model is told nobody can answer (approve.Unanswered).
	opts.Asker = approve.Unanswered{}
	if tty {
		opts.Asker = questionAsker{lines: lines, out: e.stderr, timeout: c.ApprovalTimeout}
	}
	meta := settings{Model: recordedModel(c.Model), BaseURL: recordedBaseURL(c.Model, c.BaseURL, os.Getenv), Workdir: workdir, Config: cfg, Files: files, SecretEnv: secretNames,
		PromptCheck: "passed: it interpolates no environment variable and names no secret one", Price: charged}
	opts.Meta = meta
	if asker != nil {
		opts.Asker = asker
	}
	tc := telemetry.Config{Endpoint: cfg.Telemetry.OTLPEndpoint, Content: cfg.Telemetry.Content || c.TraceContent}
	if c.OTLPEndpoint != "" {
		tc.Endpoint = c.OTLPEndpoint
	}
	return &prepared{opts: opts, meta: meta, pricing: pr, maxCost: cfg.Limits.MaxCostUSD, lines: lines, tty: tty, asker: asker, telemetry: tc}, nil
}

// optionsOf is what a configuration says of a session, as guarded options:
// allowlist, mode, rules, limits, protected paths, data flow, network,
// read_file's default, sandbox (commands under --sandbox none run under
// this binary as their reaper) and approver. The drift gate, redaction
// and the environment are the builder's defaults, as for every session.
func optionsOf(cfg config.Config, a approve.Approver) guarded.Options {
	return guarded.Options{
		Allow: cfg.Tools.Allow, Mode: permission.Mode(cfg.Permissions.Mode), Rules: cfg.Permissions.Rules,
		ToolLimits: cfg.Tools.Limits, Protected: cfg.Protect.List(), Flow: cfg.Flow.OnHit, Approver: a,
		NetAllow: cfg.Network.Allow, NetDomains: cfg.Network.Domains, ReadLines: cfg.Tools.ReadLines, Limits: cfg.Limits.Budget(),
		Sandbox: guarded.Sandbox{Backend: cfg.Sandbox.Backend, Image: cfg.Sandbox.Image, Runtime: cfg.Sandbox.Runtime,
			Memory: cfg.Sandbox.Memory, Helper: sandboxHelper(), StageAskAbove: cfg.Sandbox.StageAskAbove, NoStage: cfg.Sandbox.Unstaged,
			Egress: egressOf(cfg)},
	}
}

// egressOf is the egress proxy [sandbox.network] asks for, nil for none.
// The configuration was validated when it was loaded.
func egressOf(cfg config.Config) *egress.Config {
	e, err := cfg.Sandbox.Network.Egress()
	if err != nil || len(e.Allow) == 0 {
		return nil
	}
	return &e
}

// announce tells the user, loudly, when commands run unsandboxed or not at all.
func announce(e env) func(string) {
	return func(backend string) {
		switch backend {
		case guarded.SandboxNone:
			fmt.Fprintln(e.stderr, "rein: WARNING: --sandbox none: commands run UNSANDBOXED, with your rights (recorded in the audit log)")
		case "unavailable":
			fmt.Fprintln(e.stderr, "rein: no sandbox works here (see rein sandbox doctor): run_bash will refuse every command; pass --sandbox none to run them unsandboxed")
		}
	}
}

// offerRollback undoes an aborted session's file changes: at once with
// --rollback-on-abort, after a yes on a terminal otherwise. The default is
// to keep them (rein rollback SESSION undoes them later).
func offerRollback(e env, lines *approve.Lines, tty bool, out *outcome, unasked, quiet bool) {
	w := e.stderr
	if !unasked {
		if !tty {
			return
		}
		_, _ = lines.Fence() // only an answer typed after the question counts
		fmt.Fprintf(w, "rein: roll back the %d file(s) this session changed? [y/N] ", len(out.Changed))
		// The session's context is aborted: this question has its own.
		line, _ := lines.Next(context.Background(), approve.DefaultTimeout)
		if !approve.Yes(line) {
			fmt.Fprintf(w, "rein: kept; undo later with: rein rollback %s\n", termsafe.Line(out.Session))
			return
		}
	}
	reports, err := rollback.Restore(out.RollbackDir, out.Session)
	if err != nil {
		fmt.Fprintf(w, "rein: rollback failed: %v (try: rein rollback %s)\n", termsafe.Line(err.Error()), termsafe.Line(out.Session))
		return
	}
	for _, r := range reports {
		switch {
		case r.Err != "":
			fmt.Fprintf(w, "rein: rollback: %s %s: %s\n", termsafe.Line(r.Action), termsafe.Line(r.Path), termsafe.Line(r.Err))
		case r.Action == rollback.Kept || r.Copy != "":
			fmt.Fprintf(w, "rein: rollback: %s\n", termsafe.Line(reportLine(r, false)))
		case !quiet:
			fmt.Fprintf(w, "rein: rollback: %s %s\n", termsafe.Line(r.Action), termsafe.Line(r.Path))
		}
	}
}

// approverFor is the approver of a session whose human sits at e's stdin,
// reading it through lines: the terminal's when there is one, else one that
// refuses every call needing approval and says why. rein run and rein
// resume both ask through it; tty says whether there is a terminal.
//
// On a terminal, a write or edit in workdir is shown as a diff.
func approverFor(e env, lines *approve.Lines, timeout time.Duration, workdir string) (a approve.Approver, tty bool) {
	tty = isTerminal(e.stdin)
	a = approve.Terminal(lines, e.stderr, tty, timeout)
	if t, ok := a.(*approve.TTY); ok {
		t.Diff = approvalDiff(workdir)
	}
	return a, tty
}

// isTerminal reports whether r is a terminal (ioctl TCGETS succeeds):
// /dev/null, a file or a pipe is not, and gets no prompt.
func isTerminal(r io.Reader) bool { return approve.IsTerminal(r) }

// job is what a built session is to do, and what its report needs that
// the session does not know.
type job struct {
	// Task is the task of a Run; Chat, when set, holds a conversation
	// instead, and Resume continues an interrupted session.
	Task   string
	Chat   func(ctx context.Context, res agent.Result) (string, bool)
	Resume *guarded.Resumed
	// Expect is the ground-truth number the answer is checked against
	// (eval.CheckAnswer); empty for none.
	Expect string
	// Scenario names the demo the session is ("" for rein run).
	Scenario string
	// Replies counts the replies the demo's tools sent, for the report.
	Replies func() int
	// Observe, when set, sees every audit record too (rein chat keeps
	// its per-turn undo and status from them).
	Observe func(audit.Record)
}

// outcome is what a session did, as rein reports it: the builder's result,
// the ground-truth check, and the demo's own counts.
type outcome struct {
	guarded.Result
	Scenario string
	Check    string
	Expect   string
	Replies  int
}

// final is the one JSON object printed at the end of a session with --json.
type final struct {
	Scenario string         `json:"scenario"`
	Stop     string         `json:"stop"`
	Steps    int            `json:"steps"`
	Tokens   int64          `json:"tokens"`
	Answer   string         `json:"answer"`
	Outbox   int            `json:"outbox"`
	Replies  int            `json:"replies,omitempty"`
	Refusals map[string]int `json:"refusals"`
	Check    string         `json:"check"`
	Session  string         `json:"session"`
	Audit    string         `json:"audit"`
	Error    string         `json:"error,omitempty"`

	// Unsaved is Result.Unsaved plus Result.Unsettled: changes refused or
	// made unrecorded for want of a writable rollback store.
	Unsaved int `json:"unsaved_changes,omitempty"`
}

// final returns the outcome's final object.
func (o *outcome) final() final {
	f := final{
		Scenario: o.Scenario, Stop: string(o.Stop), Steps: o.Steps, Tokens: o.Tokens, Answer: o.Answer,
		Outbox: len(o.Outbox), Replies: o.Replies, Refusals: o.Refusals, Check: o.Check, Session: o.Session, Audit: o.Audit,
	}
	if f.Refusals == nil {
		f.Refusals = map[string]int{}
	}
	f.Unsaved = o.Unsaved + o.Unsettled
	if o.Err != nil && o.Stop != agent.StopDone {
		f.Error = o.Err.Error()
	}
	return f
}

// finalObject is the last line of --json: the session's final object, and
// what it cost when its price is known to rein run.
type finalObject struct {
	final
	Cost *costBreakdown `json:"cost,omitempty"`
}

// chainObserve calls a, then b when there is one.
func chainObserve(a, b func(audit.Record)) func(audit.Record) {
	if b == nil {
		return a
	}
	return func(r audit.Record) { a(r); b(r) }
}

// session builds a session from opts, does j with it and prints it to w:
// as a trace and summary, or with asJSON as the final object, preceded by
// the event stream when events.
func session(ctx context.Context, w io.Writer, opts guarded.Options, j job, asJSON, events bool) (*outcome, error) {
	return runSession(ctx, env{stdout: w, stderr: io.Discard}, opts, j, asJSON, events, nil)
}

// runSession builds a session from opts with the public builder, does j
// with it and prints it: a trace and summary on stdout, or with asJSON the
// event stream (when events) and the final object. With p, the session's
// cost breakdown ends it (on stderr in text mode, under "cost" in the
// final object). A session that could not start is an error, and nothing
// is printed.
func runSession(ctx context.Context, e env, opts guarded.Options, j job, asJSON, events bool, p *prepared) (*outcome, error) {
	if _, err := eval.CheckAnswer(j.Expect, false, ""); err != nil {
		return nil, err
	}
	w := e.stdout
	t := &tracer{w: w, auditDir: opts.AuditDir}
	if p != nil {
		t.styles = p.styles
	}
	switch {
	case !asJSON:
		opts.Observe = t.observe
	case events:
		opts.Observe = eventWriter(w)
	}
	if p != nil && p.telemetry.Endpoint != "" {
		exp, err := telemetry.Start(ctx, p.telemetry)
		if err != nil {
			if j.Resume != nil {
				_ = j.Resume.Log.Close() // the session would have closed it
			}
			return nil, usageError{err}
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := exp.Shutdown(sctx); err != nil {
				fmt.Fprintf(e.stderr, "rein: traces: %s\n", termsafe.Line(err.Error()))
			}
		}()
		ts := exp.Session(ctx)
		defer ts.End()
		opts.Observe = chainObserve(ts.Observe, opts.Observe)
	}
	if j.Observe != nil {
		first := opts.Observe
		opts.Observe = func(r audit.Record) {
			j.Observe(r)
			if first != nil {
				first(r)
			}
		}
	}
	s, err := guarded.New(ctx, opts)
	if r, ok := opts.Approver.(*serve.Remote); ok && err == nil {
		r.Session, r.Task = s.ID(), j.Task // who asks, as the page shows it
		if j.Resume != nil {
			r.Session = j.Resume.Log.Session() // a resumed session goes on under its own id
		}
	}
	if err != nil {
		if j.Resume != nil {
			_ = j.Resume.Log.Close() // the session would have closed it
		}
		return nil, err
	}
	defer s.Close()
	var res guarded.Result
	switch {
	case j.Resume != nil:
		res = s.Resume(ctx, *j.Resume)
	default:
		res = s.Chat(ctx, j.Task, j.Chat)
	}
	if se := (*guarded.StartError)(nil); errors.As(res.Err, &se) {
		return nil, se.Err
	}
	out := &outcome{Result: res, Scenario: j.Scenario, Expect: j.Expect}
	out.Check, _ = eval.CheckAnswer(j.Expect, res.Stop == agent.StopDone, res.Answer) // parsed above
	if j.Replies != nil {
		out.Replies = j.Replies()
	}
	var cost *costBreakdown
	if p != nil {
		b := p.pricing.breakdown(out.Usage, p.maxCost)
		cost = &b
	}
	if asJSON {
		return out, json.NewEncoder(safeJSON{w}).Encode(finalObject{final: out.final(), Cost: cost})
	}
	t.summary(out)
	if cost != nil {
		cost.print(e.stderr)
	}
	return out, nil
}

// config loads the user's file, the project's, then --config, then applies flags.
func (c *agentFlags) config(workdir string) (config.Config, []string, error) {
	sources := []config.Source{{Path: config.UserFile()}, {Path: config.ProjectFile(workdir), Narrow: true, Caps: builtinCap}}
	if c.Config != "" {
		sources = append(sources, config.Source{Path: c.Config, Required: true})
	}
	cfg, err := config.Load(sources...)
	if err != nil {
		return cfg, nil, err
	}
	var files []string
	for _, s := range sources {
		if _, err := os.Stat(s.Path); err == nil {
			files = append(files, s.Path)
		}
	}
	c.MaxSteps.apply(&cfg.Limits.MaxSteps)
	c.MaxToolCalls.apply(&cfg.Limits.MaxToolCalls)
	c.MaxTokens.apply(&cfg.Limits.MaxTokens)
	c.MaxCostUSD.apply(&cfg.Limits.MaxCostUSD)
	wall := time.Duration(cfg.Limits.Timeout)
	c.Timeout.apply(&wall)
	cfg.Limits.Timeout = config.Duration(wall)
	set(&cfg.Tools.ReadLines, c.ReadLines)
	if c.Tools != nil {
		cfg.Tools.Allow = c.Tools
	}
	if c.Mode != "" {
		cfg.Permissions.Mode = c.Mode
	}
	if c.Durability != "" {
		cfg.Audit.Durability = c.Durability
	}
	if c.Sandbox != "" {
		cfg.Sandbox.Backend = c.Sandbox
	}
	if c.Image != "" {
		cfg.Sandbox.Image = c.Image
	}
	if err := cfg.Validate(); err != nil {
		if c.Mode != "" {
			err = fmt.Errorf("--mode: %w", err)
		}
		return cfg, nil, err
	}
	if err := knownTools().CheckNames(cfg.Tools.Allow); err != nil {
		return cfg, nil, fmt.Errorf("allowlist: %w", err)
	}
	return cfg, files, nil
}

func set[T any](dst *T, flag *T) {
	if flag != nil {
		*dst = *flag
	}
}

// model builds the model named by --model.
func (c *agentFlags) model() (model.Model, error) {
	if c.Model == "" {
		return nil, usagef("no model: pass --model PROVIDER:MODEL (anthropic:…, openai:…, or scripted:PATH to play a script file, see docs/script-format.md), set REIN_MODEL, or set default in your config's [model]")
	}
	provider, name, ok := strings.Cut(c.Model, ":")
	if !ok || name == "" {
		return nil, usagef("--model %q: write it as PROVIDER:MODEL, e.g. scripted:script.json", c.Model)
	}
	switch provider {
	case "anthropic":
		m, err := anthropic.New(anthropic.Options{Model: name, BaseURL: c.BaseURL, Timeout: c.LLMTimeout})
		if err != nil {
			return nil, usagef("--model %s: %v", c.Model, err)
		}
		return m, nil
	case "openai":
		m, err := openai.New(openai.Options{Model: name, BaseURL: c.BaseURL, Timeout: c.LLMTimeout})
		if err != nil {
			return nil, usagef("--model %s: %v", c.Model, err)
		}
		return m, nil
	case "scripted":
		s, err := scripted.Load(name)
		if err != nil {
			return nil, usageError{err}
		}
		reg := knownTools()
		if err := s.CheckTools(func(n string) bool { return reg.Has(n) || mcp.IsToolName(n) }); err != nil {
			return nil, usagef("script %s: %v (known tools: %s)", name, err, strings.Join(reg.Names(), ", "))
		}
		return scripted.New("scripted:"+name, s), nil
	}
	return nil, usagef("--model %q: unknown provider %q; this build knows: scripted, anthropic, openai", c.Model, provider)
}

// knownTools is the tool set of this build, for checking names before a run.
func knownTools() *tool.Registry {
	reg, err := guarded.Tools(guarded.Options{})
	if err != nil {
		panic(err) // the built-in names are fixed and distinct
	}
	return reg
}

// builtinCap is a tool's per-session cap when no config sets one, as the
// limit gate applies it: irreversible tools (and unknown ones, to be safe)
// gate.DefaultIrreversible, read-only and reversible ones none.
func builtinCap(name string) (int, bool) {
	t, ok := knownTools().Lookup(name)
	if !ok || t.Spec().Effect == tool.Irreversible {
		return gate.DefaultIrreversible, true
	}
	return 0, false
}

// stopCode maps a stop reason to rein's exit status.
func stopCode(s agent.StopReason) int {
	switch s {
	case agent.StopDone:
		return exitOK
	case agent.StopMaxSteps, agent.StopBudget, agent.StopTimeout:
		return exitStopped
	case agent.StopAborted:
		return exitAborted
	}
	return exitError
}
