package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/internal/resume"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/scripted"
)

type resumeCmd struct {
	Session         string        `arg:"" help:"The session: its id (the audit log's file name without .jsonl), a unique prefix of one, or the log's path."`
	AuditDir        string        `placeholder:"DIR" help:"Where the session's audit log is (default audit.dir from config, else $XDG_STATE_HOME/rein/audit)."`
	Model           string        `placeholder:"PROVIDER:MODEL" help:"The model to go on with (default: the one the session was started with)."`
	BaseURL         string        `name:"base-url" placeholder:"URL" help:"The provider's API base URL (default: the one the session talked to, else as for rein run)."`
	JSON            bool          `name:"json" help:"Print every new audit record as a JSON line, then one final JSON object."`
	ApprovalTimeout time.Duration `name:"approval-timeout" default:"60s" placeholder:"DURATION" help:"How long an approval prompt waits on the terminal; no answer in time is No. Without a terminal every approval is No."`
	MaxContext      int64         `name:"max-context-tokens" default:"150000" placeholder:"N" help:"Context budget, as for rein run."`
}

// recordedStart is what a session_start record's config holds.
type recordedStart struct {
	Model string `json:"model"`
	Meta  struct {
		Settings settings `json:"settings"`
		Sandbox  string   `json:"sandbox"`
	} `json:"meta"`
}

func (c *resumeCmd) Run(ctx context.Context, e env) error {
	cfg, err := config.Load(config.Source{Path: config.UserFile()})
	if err != nil {
		return usageError{err}
	}
	dir, err := auditDir(c.AuditDir, cfg)
	if err != nil {
		return err
	}
	id, path, err := resolveSession(dir, c.Session)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return usagef("no audit log for session %q in %s: give the id of an interrupted session (the log's file name without .jsonl)", c.Session, dir)
	}
	c.Session, dir = id, filepath.Dir(path)
	durability, _ := cfg.Audit.Level()
	// Append takes the session's lock before it reads the log: a second
	// resume, or a resume of a session still running, stops here.
	log, recs, err := audit.Append(path, audit.WithDurability(durability))
	if err != nil {
		return err
	}
	closeLog := true
	defer func() {
		if closeLog {
			_ = log.Close()
		}
	}()
	p, err := resume.Read(recs)
	if errors.Is(err, resume.ErrFinished) {
		return usagef("session %s: %v", c.Session, err)
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", c.Session, err)
	}
	var start recordedStart
	if err := json.Unmarshal(p.Config, &start); err != nil || start.Meta.Settings.Workdir == "" {
		return fmt.Errorf("session %s: its start record does not say how it was run (work dir, configuration), so it cannot be resumed", c.Session)
	}
	wrap, err := p.Wrapper()
	if err != nil {
		return err
	}
	// The human is asked as rein run asks: the same approver, over the
	// same line reader as the "did it happen?" question below.
	lines := approve.NewLines(e.stdin)
	defer lines.Close()
	approver, tty := approverFor(e, lines, c.ApprovalTimeout, start.Meta.Settings.Workdir)
	notes, err := settle(ctx, e, p, lines, tty)
	if err != nil {
		return err
	}
	name, base := c.Model, c.BaseURL
	if name == "" {
		name = start.Meta.Settings.Model
		if base == "" {
			base = start.Meta.Settings.BaseURL // the session's own server, never another one silently
		}
	}
	m, err := resumeModel(name, base, p.ModelCalls)
	if err != nil {
		return err
	}
	rc := start.Meta.Settings.Config
	opts := optionsOf(rc, approver)
	opts.Model, opts.WorkDir, opts.AuditDir, opts.Durability = m, start.Meta.Settings.Workdir, dir, durability
	opts.Announce, opts.MaxContextTokens = announce(e), c.MaxContext
	// The session's own system prompt, as it was sent (none when it had none).
	opts.System, opts.NoSystem = p.Start.System, p.Start.System == ""
	p.State.Note = notes
	closeLog = false // the session closes it
	out, err := session(ctx, e.stdout, opts, job{Expect: start.Meta.Settings.Expect,
		Resume: &guarded.Resumed{Log: log, Task: p.Task, State: p.State, Boundary: wrap.Boundary, Goals: p.Goals}}, c.JSON, true)
	if err != nil {
		return err
	}
	return exitCode(stopCode(out.Stop))
}

// settle decides what happens to the calls whose outcome the log does not
// know. Read-only and reversible calls run again (their files were saved
// before the first try). An irreversible one is never run again blindly: a
// human on a terminal says whether it happened; without one, rein refuses.
//
// "Run it again" puts the call back through the gates, so a call that
// needs approval is asked about again, by the session's approver.
func settle(ctx context.Context, e env, p *resume.Point, in *approve.Lines, tty bool) (string, error) {
	var notes []string
	for _, u := range p.Unfinished {
		what := fmt.Sprintf("%s %s (call %s, key %s)", u.Call.Name, compact(u.Call.Args), u.Call.ID, u.Key)
		if !u.Irreversible() {
			p.State.Pending = append(p.State.Pending, u.Call)
			notes = append(notes, "run again: "+what)
			continue
		}
		if !tty {
			return "", fmt.Errorf("session %s was interrupted during an irreversible call, which may or may not have happened: %s. "+
				"rein does not repeat it without a human: run rein resume on a terminal to say whether it happened", p.Session, what)
		}
		_, _ = in.Fence() // only an answer typed after the question counts
		fmt.Fprintf(e.stderr, "rein: interrupted during an irreversible call that may or may not have happened:\n  %s\n"+
			"Did it happen? [y] yes, tell the model it did / [r] no, run it again / [Enter] stop here: ", termsafe.Line(what))
		line, _ := in.Next(ctx, -1)
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			p.State.Settled = append(p.State.Settled, model.ToolResult{CallID: u.Call.ID, Name: u.Call.Name,
				Content: "This call was made before the session was interrupted; a human confirmed that it took effect. Do not make it again."})
			notes = append(notes, "a human said it happened: "+what)
		case "r":
			p.State.Pending = append(p.State.Pending, u.Call)
			notes = append(notes, "a human said run it again: "+what)
		default:
			return "", exitCode(exitStopped)
		}
	}
	if p.Unjudged > 0 {
		notes = append(notes, fmt.Sprintf("%d call(s) of the last response never reached the gates and are dropped", p.Unjudged))
	}
	if len(notes) == 0 {
		return "nothing was in flight", nil
	}
	return strings.Join(notes, "; "), nil
}

func compact(b json.RawMessage) string {
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// resumeModel rebuilds the session's model, moved on past the calls it made.
func resumeModel(name, baseURL string, made int) (model.Model, error) {
	rc := agentFlags{Model: name, BaseURL: baseURL}
	m, err := rc.model()
	if err != nil {
		return nil, err
	}
	if s, ok := m.(*scripted.Model); ok {
		s.Skip(made)
	}
	return m, nil
}
