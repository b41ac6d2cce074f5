package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/resume"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/model"
)

// earlierChat is the conversation rein chat --resume goes on with: its
// log (locked, opened for appending) and where it stood.
type earlierChat struct {
	id, path string
	log      *audit.Writer // nil once the session owns it
	point    *resume.Point
	// notes say what was taken from the session, and what was not.
	notes []string
}

// openEarlier finds the session c.Resume names, locks its log and reads
// where it stood. The conversation goes on in its own work dir, with its
// own model, tools, mode and sandbox unless a flag names others: c's
// flags are set to them, and a --workdir that names another directory is
// refused.
func (c *chatCmd) openEarlier() (*earlierChat, error) {
	cfg, err := config.Load(config.Source{Path: config.UserFile()})
	if err != nil {
		return nil, usageError{err}
	}
	if c.Durability != "" {
		cfg.Audit.Durability = c.Durability
	}
	durability, err := cfg.Audit.Level()
	if err != nil {
		return nil, usagef("--durability: %v", err)
	}
	dir, err := auditDir(c.AuditDir, cfg)
	if err != nil {
		return nil, err
	}
	id, path, err := resolveSession(dir, c.Resume)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, usagef("--resume %s: no audit log at %s: give a session's id, a unique prefix of one, or its log's path (rein sessions lists them)", c.Resume, path)
	}
	// Append takes the session's lock before it reads the log: a session
	// still running, or resumed elsewhere, stops here.
	log, recs, err := audit.Append(path, audit.WithDurability(durability))
	if err != nil {
		return nil, err
	}
	ec := &earlierChat{id: id, path: path, log: log}
	p, err := resume.Read(recs)
	if err != nil && !errors.Is(err, resume.ErrFinished) {
		ec.close()
		return nil, fmt.Errorf("--resume %s: %w", id, err)
	}
	ec.point = p
	var start recordedStart
	if err := json.Unmarshal(p.Config, &start); err != nil || start.Meta.Settings.Workdir == "" {
		ec.close()
		return nil, fmt.Errorf("--resume %s: its start record does not say where it ran (work dir, model), so it cannot go on", id)
	}
	wd := start.Meta.Settings.Workdir
	if c.Workdir != "." {
		if abs, err := filepath.Abs(c.Workdir); err != nil || abs != wd {
			ec.close()
			return nil, usagef("--resume %s: the conversation ran in %s; it goes on there (leave out --workdir)", id, wd)
		}
	}
	c.Workdir = wd
	// Its model and server, tools, mode and sandbox, unless a flag says
	// otherwise; the rest (rules, protected paths, caps) is the config of
	// now. What would loosen the guards — no sandbox, bypass mode — is
	// never taken over: it must be asked for again.
	was := start.Meta.Settings
	var took []string
	if c.Model == "" && was.Model != "" {
		c.Model = was.Model
		took = append(took, "model "+was.Model)
		if c.BaseURL == "" && was.BaseURL != "" {
			c.BaseURL = was.BaseURL // never the conversation to another server than its own
			took = append(took, "base URL "+was.BaseURL)
		}
	}
	if c.Tools == nil && len(was.Config.Tools.Allow) > 0 {
		c.Tools = was.Config.Tools.Allow
		took = append(took, "tools "+strings.Join(was.Config.Tools.Allow, ","))
	}
	switch m := was.Config.Permissions.Mode; {
	case c.Mode != "" || m == "":
	case m == string(permission.Bypass):
		ec.notes = append(ec.notes, "it ran in mode bypass; it goes on in the mode of your config unless you pass --mode bypass again")
	default:
		c.Mode = m
		took = append(took, "mode "+m)
	}
	switch b := was.Config.Sandbox.Backend; {
	case c.Sandbox != "" || b == "":
	case b == guarded.SandboxNone:
		ec.notes = append(ec.notes, "it ran with --sandbox none; it goes on sandboxed unless you pass --sandbox none again")
	default:
		c.Sandbox = b
		took = append(took, "sandbox "+b)
	}
	if len(took) > 0 {
		ec.notes = append([]string{"as it ran: " + strings.Join(took, ", ") + " (flags change them)"}, ec.notes...)
	}
	return ec, nil
}

// close releases the log unless the session took it.
func (ec *earlierChat) close() {
	if ec.log != nil {
		_ = ec.log.Close()
		ec.log = nil
	}
}

// resumed is the conversation going on with the user's message first,
// then next's.
func (ec *earlierChat) resumed(first string, next func(context.Context, agent.Result) (string, bool)) *guarded.Resumed {
	p := ec.point
	wrap, _ := p.Wrapper() // read once by resume.Read already
	return &guarded.Resumed{Log: ec.log, Task: p.Task, State: p.State, Boundary: wrap.Boundary, Goals: p.Goals,
		Message: first, Ended: p.Ended, Next: next}
}

// goOnFrom tells the user where the conversation stood: how many messages
// it had, how its last turn ended and its last answer, the calls whose
// outcome is unknown; and counts the conversation's use so far, so that
// the next turn's line shows only that turn's.
func (c *chat) goOnFrom(ec *earlierChat) {
	p := ec.point
	used := p.State.Used
	c.mu.Lock()
	c.session = ec.id
	c.turn = len(p.Goals) + 1
	c.before = agent.Result{Steps: used.Steps, ToolCalls: used.ToolCalls, Tokens: used.Tokens, Usage: used.Usage, CostUSD: used.CostUSD}
	c.last, c.live = c.before, used.Tokens
	c.mu.Unlock()
	fmt.Fprintf(c.talk, "rein: going on with session %s: %d message(s) of yours so far, %d model call(s), %d tokens\n",
		termsafe.Line(ec.id), len(p.Goals)+1, p.ModelCalls, used.Tokens)
	for _, n := range ec.notes {
		fmt.Fprintf(c.talk, "rein: %s\n", termsafe.Line(n))
	}
	if text := lastText(p.State.Messages); text != "" && p.Ended == "" {
		fmt.Fprintf(c.talk, "\n%s\n\n", c.answer(text))
	}
	if p.Ended != "" {
		fmt.Fprintf(c.talk, "rein: its last turn ended before it was finished (%s); the model is told so with your next message\n", termsafe.Line(p.Ended))
	}
	for _, u := range p.Unfinished {
		call := u.Call.Name + " " + compact(u.Call.Args)
		if u.Started {
			fmt.Fprintf(c.talk, "rein: %s may or may not have run; the model is told it is not known\n", termsafe.Line(call))
			continue
		}
		fmt.Fprintf(c.talk, "rein: %s was judged and did not start; the model is told it is not known\n", termsafe.Line(call))
	}
}

// lastText is the text of the conversation's last message, when it is the
// model's answer.
func lastText(msgs []model.Message) string {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != model.RoleAssistant {
		return ""
	}
	var text string
	for _, b := range msgs[len(msgs)-1].Blocks {
		if b.Kind == model.KindText {
			text += b.Text
		}
	}
	return text
}
