package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/eval"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/anthropic"
	"github.com/reinhq/rein/model/openai"
	"github.com/reinhq/rein/model/scripted"
	"github.com/reinhq/rein/prompt"
	"github.com/reinhq/rein/secret"
	"github.com/reinhq/rein/session/rollback"
	"github.com/reinhq/rein/tool"
)

type runCmd struct {
	Task            string         `arg:"" help:"The task, in words."`
	Model           string         `placeholder:"PROVIDER:MODEL" help:"The model. scripted:PATH plays a script file (docs/script-format.md)."`
	Tools           []string       `sep:"," placeholder:"TOOL" help:"Allowlist: the only tools the model sees and may call (default tools.allow from config, else every built-in tool but send_email; see rein tools)."`
	Mode            string         `placeholder:"MODE" help:"Permission mode: default (reads and planning run, the rest asks), accept-edits (file edits run too), plan (read-only), bypass (what the hard gates allow runs; what they would ask about is refused). Default: permissions.mode from config, else default."`
	Workdir         string         `default:"." placeholder:"DIR" help:"Work directory: the file tools and the shell see it and nothing outside it."`
	MaxSteps        *int           `placeholder:"N" help:"Stop after N model calls (default 40)."`
	MaxToolCalls    *int           `placeholder:"N" help:"Stop when the model asks for more than N tool calls (default 200)."`
	MaxTokens       *int64         `placeholder:"N" help:"Stop when more than N tokens were used (default 200000)."`
	MaxCostUSD      *float64       `name:"max-cost-usd" placeholder:"USD" help:"Stop when the run cost more than this (default: no cap; the scripted model costs nothing)."`
	Timeout         *time.Duration `placeholder:"DURATION" help:"Stop after this wall time, like 90s or 30m (default 30m)."`
	ReadLines       *int           `placeholder:"N" help:"Lines read_file returns when the model gives no limit (default 2000, at most 2000)."`
	Expect          string         `placeholder:"NUMBER" help:"Ground truth: the answer passes when it contains this number (compared as a number) and the run ended done."`
	JSON            bool           `name:"json" help:"Print every audit record as a JSON line, then one final JSON object."`
	AuditDir        string         `placeholder:"DIR" help:"Directory for the audit log (default audit.dir from config, else $XDG_STATE_HOME/rein/audit)."`
	Config          string         `placeholder:"FILE" help:"A config file applied after ~/.config/rein/config.toml and DIR/.rein/config.toml."`
	Durability      string         `placeholder:"LEVEL" help:"Audit durability: fsync (every record on disk before the next step; the default) or flush (handed to the OS: survives a crash of rein, not of the machine)."`
	RollbackOnAbort bool           `name:"rollback-on-abort" help:"When the run is aborted (Ctrl-C, SIGTERM), undo its file changes without asking."`
	Sandbox         string         `placeholder:"BACKEND" help:"Where commands run: auto (the strongest that works here: landlock, else docker with --image; with none working, commands are refused), landlock, docker, none (unsandboxed, only when asked for). Default: sandbox.backend from config, else auto."`
	Image           string         `placeholder:"IMAGE" help:"Container image for --sandbox docker (never pulled)."`
	BaseURL         string         `name:"base-url" placeholder:"URL" help:"The provider's API base URL (default ANTHROPIC_BASE_URL or OPENAI_BASE_URL, else the provider's own); a local OpenAI-compatible server needs no key. Keys come only from ANTHROPIC_API_KEY / OPENAI_API_KEY."`
	LLMTimeout      time.Duration  `name:"llm-timeout" default:"120s" help:"Timeout of one model call; the provider's SDK retries 429 and 5xx with backoff."`
	MaxContext      int64          `name:"max-context-tokens" default:"150000" placeholder:"N" help:"Context budget: before a model call over 80% of it, the middle of the conversation is replaced by a summary (the task and the newest messages stay)."`
}

// settings is the effective configuration of a run, recorded at session start.
type settings struct {
	Model   string        `json:"model"`
	Workdir string        `json:"workdir"`
	Config  config.Config `json:"config"`
	Files   []string      `json:"config_files,omitempty"`
	Expect  string        `json:"expect,omitempty"`
	// SecretEnv names the secret-looking environment variables (names
	// only): their values are redacted from everything the model and the
	// log see, and commands never get them.
	SecretEnv []string `json:"secret_env,omitempty"`
}

func (c *runCmd) Run(ctx context.Context, e env) error {
	if strings.TrimSpace(c.Task) == "" {
		return usagef("the task is empty: say what the agent should do, e.g. rein run --model scripted:script.json \"Read notes.txt and sum the amounts\"")
	}
	workdir, err := filepath.Abs(c.Workdir)
	if err != nil {
		return usagef("--workdir %s: %v", c.Workdir, err)
	}
	cfg, files, err := c.config(workdir)
	if err != nil {
		return usageError{err}
	}
	if c.Expect != "" {
		if _, err := eval.ParseExpected(c.Expect); err != nil {
			return usagef("--expect: %v", err)
		}
	}
	if st, err := os.Stat(workdir); err != nil || !st.IsDir() {
		return usagef("--workdir: %s is not a directory", c.Workdir)
	}
	m, err := c.model()
	if err != nil {
		return err
	}
	dir, err := auditDir(c.AuditDir, cfg)
	if err != nil {
		return err
	}
	durability, _ := cfg.Audit.Level() // validated by Load
	spec := harness.Spec{
		Task: c.Task, Model: m, WorkDir: workdir, ReadLines: cfg.Tools.ReadLines,
		Policy: policyOf(cfg, approve.Deny{}), NetAllow: cfg.Network.Allow,
		Limits: cfg.Limits.Budget(), Expect: c.Expect, AuditDir: dir, Durability: durability,
		Meta: settings{Model: c.Model, Workdir: workdir, Config: cfg, Files: files, Expect: c.Expect,
			SecretEnv: secret.Names(os.Environ())},
		Sandbox:          harness.Sandbox{Backend: cfg.Sandbox.Backend, Image: cfg.Sandbox.Image, Runtime: cfg.Sandbox.Runtime},
		Announce:         announce(e),
		Redact:           secret.NewRedactor(os.Environ()).Redact,
		System:           prompt.System(),
		Price:            price(c.Model),
		MaxContextTokens: c.MaxContext,
	}
	out, err := session(ctx, e.stdout, spec, c.JSON, true)
	if err != nil {
		return err
	}
	if out.Stop == agent.StopAborted && len(out.Changed) > 0 && out.RollbackDir != "" {
		offerRollback(e, out, c.RollbackOnAbort, c.JSON)
	}
	return exitCode(stopCode(out.Stop))
}

// announce tells the user, loudly, when commands run unsandboxed or not at all.
func announce(e env) func(string) {
	return func(backend string) {
		switch backend {
		case harness.SandboxNone:
			fmt.Fprintln(e.stderr, "rein: WARNING: --sandbox none: commands run UNSANDBOXED, with your rights (recorded in the audit log)")
		case "unavailable":
			fmt.Fprintln(e.stderr, "rein: no sandbox works here (see rein sandbox doctor): run_bash will refuse every command; pass --sandbox none to run them unsandboxed")
		}
	}
}

// offerRollback undoes an aborted session's file changes: at once with
// --rollback-on-abort, after a yes on a terminal otherwise. The default is
// to keep them (rein rollback SESSION undoes them later).
func offerRollback(e env, out *harness.Outcome, unasked, quiet bool) {
	w := e.stderr
	if !unasked {
		if !isTerminal(e.stdin) {
			return
		}
		fmt.Fprintf(w, "rein: roll back the %d file(s) this session changed? [y/N] ", len(out.Changed))
		line, _ := bufio.NewReader(e.stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintf(w, "rein: kept; undo later with: rein rollback %s\n", out.Session)
			return
		}
	}
	reports, err := rollback.Restore(out.RollbackDir, out.Session)
	if err != nil {
		fmt.Fprintf(w, "rein: rollback failed: %v (try: rein rollback %s)\n", err, out.Session)
		return
	}
	for _, r := range reports {
		if r.Err != "" {
			fmt.Fprintf(w, "rein: rollback: %s %s: %s\n", r.Action, r.Path, r.Err)
			continue
		}
		if !quiet {
			fmt.Fprintf(w, "rein: rollback: %s %s\n", r.Action, r.Path)
		}
	}
}

// isTerminal reports whether r is a character device (a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// session runs spec and prints it to w: as a trace and summary, or with
// asJSON as the final object, preceded by every audit record when events.
func session(ctx context.Context, w io.Writer, spec harness.Spec, asJSON, events bool) (*harness.Outcome, error) {
	enc := json.NewEncoder(w)
	t := &tracer{w: w, auditDir: spec.AuditDir}
	switch {
	case !asJSON:
		spec.Observe = t.observe
	case events:
		spec.Observe = func(r audit.Record) { _ = enc.Encode(r) } // stdout is best effort; the audit file is the record
	}
	out, err := harness.Run(ctx, spec)
	if err != nil {
		return nil, err
	}
	if asJSON {
		return out, enc.Encode(out.Final())
	}
	t.summary(out)
	return out, nil
}

// config loads the user's file, the project's, then --config, then applies flags.
func (c *runCmd) config(workdir string) (config.Config, []string, error) {
	sources := []config.Source{{Path: config.UserFile()}, {Path: config.ProjectFile(workdir), Narrow: true}}
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
	set(&cfg.Limits.MaxSteps, c.MaxSteps)
	set(&cfg.Limits.MaxToolCalls, c.MaxToolCalls)
	set(&cfg.Limits.MaxTokens, c.MaxTokens)
	set(&cfg.Limits.MaxCostUSD, c.MaxCostUSD)
	if c.Timeout != nil {
		cfg.Limits.Timeout = config.Duration(*c.Timeout)
	}
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
func (c *runCmd) model() (model.Model, error) {
	if c.Model == "" {
		return nil, usagef("no model: pass --model scripted:PATH to play a script file (see docs/script-format.md)")
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
		if err := s.CheckTools(reg.Has); err != nil {
			return nil, usagef("script %s: %v (known tools: %s)", name, err, strings.Join(reg.Names(), ", "))
		}
		return scripted.New("scripted:"+name, s), nil
	}
	return nil, usagef("--model %q: unknown provider %q; this build knows: scripted, anthropic, openai", c.Model, provider)
}

// price returns the cost function of a model, nil when its price is not
// known (cost is then not tracked, and --max-cost-usd cannot stop the run).
func price(m string) func(model.Usage) float64 {
	provider, name, _ := strings.Cut(m, ":")
	switch provider {
	case "openai":
		if p, ok := openai.PriceOf(openai.DefaultPrices(), name); ok {
			return func(u model.Usage) float64 { return openai.Cost(p, u) }
		}
	case "anthropic":
		if p, ok := anthropic.PriceFor(anthropic.DefaultPrices(), name); ok {
			return func(u model.Usage) float64 { return anthropic.Cost(p, u) }
		}
	}
	return nil
}

// knownTools is the tool set of this build, for checking names before a run.
func knownTools() *tool.Registry {
	reg, err := harness.Tools(harness.Env{ReadLines: 1})
	if err != nil {
		panic(err) // the built-in names are fixed and distinct
	}
	return reg
}

// policyOf is the session policy a configuration describes.
func policyOf(cfg config.Config, a approve.Approver) harness.Policy {
	return harness.Policy{Allowed: cfg.Tools.Allow, Mode: permission.Mode(cfg.Permissions.Mode),
		Rules: cfg.Permissions.Rules, ToolLimits: cfg.Tools.Limits, Approver: a}
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
