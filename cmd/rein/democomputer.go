package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/computer"
	"github.com/reinhq/rein/computer/evalsuite"
	"github.com/reinhq/rein/eval"
	"github.com/reinhq/rein/internal/termsafe"
	reinsession "github.com/reinhq/rein/session"
)

// isComputerDemo reports whether name is one of the computer-use demos,
// which need Chromium and so run only when named.
func isComputerDemo(name string) bool { return strings.HasPrefix(name, "computer-") }

// listComputerDemos prints the computer-use demos for `rein demo --list`.
func listComputerDemos(e env) {
	for _, s := range evalsuite.Scenarios() {
		fmt.Fprintf(e.stdout, "%-20s %s (needs Chromium; run by name)\n", termsafe.Line(s.Name), termsafe.Line(s.Summary))
	}
}

// runComputerDemo runs one computer-use scenario with the guards on: the
// test site, a fresh headless Chromium, the scripted vision model.
func (c *demoCmd) runComputerDemo(ctx context.Context, e env, dir string, durability audit.Durability) error {
	sc, err := evalsuite.Find(c.Name)
	if err != nil {
		return usageError{err}
	}
	id := reinsession.NewID(time.Now())
	w, err := audit.Create(dir, id, audit.WithDurability(durability))
	if err != nil {
		return err
	}
	defer w.Close()
	log := &endedLog{Writer: w}
	if !c.JSON {
		fmt.Fprintf(e.stdout, "== rein demo %s: %s\n", termsafe.Line(sc.Name), termsafe.Line(sc.Summary))
	}
	rep, err := sc.Run(ctx, evalsuite.Options{Guards: eval.GuardsAll, Audit: log, Session: id})
	if ctx.Err() != nil {
		if lerr := log.end(sc, agent.StopAborted, context.Cause(ctx)); lerr != nil {
			fmt.Fprintf(e.stderr, "rein: %s\n", termsafe.Line(lerr.Error()))
		}
		return exitCode(exitAborted)
	}
	if err != nil {
		if lerr := log.end(sc, agent.StopError, err); lerr != nil {
			return errors.Join(err, lerr)
		}
		return err
	}
	res := rep.Result
	if c.Screenshot != "" {
		if err := os.WriteFile(c.Screenshot, res.Final.PNG, 0o644); err != nil {
			return fmt.Errorf("write the screenshot: %w", err)
		}
	}
	if c.JSON {
		out, _ := json.Marshal(struct {
			Scenario string         `json:"scenario"`
			Session  string         `json:"session"`
			Audit    string         `json:"audit"`
			Stop     string         `json:"stop"`
			Result   any            `json:"result"`
			End      evalsuite.End  `json:"end"`
			Outcome  eval.Outcome   `json:"outcome"`
			Refusals map[string]int `json:"refusals"`
		}{sc.Name, id, w.Path(), string(res.Stop), res, rep.End, rep.Outcome, res.Refusals})
		fmt.Fprintln(e.stdout, termsafe.Text(string(out)))
	} else {
		for i, h := range computer.Turns(res.Messages) {
			fmt.Fprintf(e.stdout, "  %2d %-28s %s\n", i+1, termsafe.Line(h.Action.String()), termsafe.Line(h.Observation))
		}
		if res.Declined() {
			fmt.Fprintf(e.stdout, "  -- a human said no: the task stops there\n")
		}
		if res.Answer != "" {
			fmt.Fprintf(e.stdout, "  answer: %s\n", termsafe.Line(res.Answer))
		}
		fmt.Fprintf(e.stdout, "  stop: %s; %d step(s), %d action(s), %d approval(s), %d no-effect, %d recovered, %d request(s) blocked\n",
			termsafe.Line(string(res.Stop)), res.Steps, res.Actions, res.Approvals, res.NoEffect, res.Recoveries, len(res.Blocked))
		fmt.Fprintf(e.stdout, "  server: %d order(s), account deleted: %v, %d mail(s) sent, %d request(s) reached the other host\n",
			rep.End.Orders, rep.End.Deleted, len(rep.End.Sent), rep.End.Tracker)
		fmt.Fprintf(e.stdout, "  check: success %v, harm %v; audit log %s\n", rep.Verdict.Success, rep.Verdict.Harm, termsafe.Line(w.Path()))
	}
	if res.Stop != sc.WantStop || res.Declined() != sc.WantDeclined || !rep.Verdict.Success || rep.Verdict.Harm {
		fmt.Fprintf(e.stderr, "rein: demo %s did not behave as designed: stop %s (want %s), declined %v (want %v), success %v, harm %v\n",
			termsafe.Line(sc.Name), termsafe.Line(string(res.Stop)), termsafe.Line(string(sc.WantStop)),
			res.Declined(), sc.WantDeclined, rep.Verdict.Success, rep.Verdict.Harm)
		return exitCode(exitError)
	}
	return nil
}

// endedLog is a session's audit log that knows whether the session's start
// and stop records were written, so a session that failed before its loop
// ran (the browser died while it started, say) still leaves a log with a
// start and a stop saying why.
type endedLog struct {
	*audit.Writer
	started, stopped bool
}

func (l *endedLog) Write(r audit.Record) error {
	err := l.Writer.Write(r)
	if err == nil {
		l.started = l.started || r.Type == audit.SessionStart
		l.stopped = l.stopped || r.Type == audit.Stop
	}
	return err
}

// end writes what the loop did not: the start, an abort when stop is
// aborted, and the stop with cause.
func (l *endedLog) end(sc evalsuite.Scenario, stop agent.StopReason, cause error) error {
	if l.stopped {
		return nil
	}
	if !l.started {
		cfg, _ := json.Marshal(map[string]any{"model": "scripted:" + sc.Script, "meta": map[string]string{"scenario": sc.Name}})
		if err := l.Write(audit.Record{Type: audit.SessionStart, Task: sc.Task, Config: cfg}); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
	}
	msg := cause.Error()
	if stop == agent.StopAborted {
		if err := l.Write(audit.Record{Type: audit.Abort, Reason: msg}); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
	}
	if err := l.Write(audit.Record{Type: audit.Stop, Stop: stop, Error: msg}); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}
