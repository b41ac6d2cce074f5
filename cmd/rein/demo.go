package main

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/demo"
	"github.com/reinhq/rein/internal/termsafe"
)

type demoCmd struct {
	Name       string `arg:"" optional:"" help:"Scenario to run (see --list). All of them run, one after another, when omitted."`
	List       bool   `help:"List the scenarios and exit."`
	JSON       bool   `name:"json" help:"Print one JSON object per scenario instead of the trace."`
	AuditDir   string `placeholder:"DIR" help:"Directory for the audit logs (default: audit.dir from the user config, else $XDG_STATE_HOME/rein/audit, else ~/.local/state/rein/audit)."`
	Screenshot string `placeholder:"FILE" help:"For a computer-… demo: write the final page's screenshot (PNG) to FILE."`
}

func (c *demoCmd) Run(ctx context.Context, e env) error {
	if c.List {
		for _, s := range demo.All() {
			fmt.Fprintf(e.stdout, "%-20s %s\n", termsafe.Line(s.Name), termsafe.Line(s.Summary))
		}
		listComputerDemos(e)
		return nil
	}
	scenarios := demo.All()
	if c.Name != "" && !isComputerDemo(c.Name) {
		s, err := demo.Find(c.Name)
		if err != nil {
			return usageError{err}
		}
		scenarios = []demo.Scenario{s}
	}
	cfg, err := config.Load(config.Source{Path: config.UserFile()})
	if err != nil {
		return usageError{err}
	}
	dir, err := auditDir(c.AuditDir, cfg)
	if err != nil {
		return err
	}
	durability, _ := cfg.Audit.Level() // validated by Load
	if isComputerDemo(c.Name) {
		return c.runComputerDemo(ctx, e, dir, durability)
	}
	deviations := 0
	for i, first := range scenarios {
		if !c.JSON && i > 0 {
			fmt.Fprintln(e.stdout)
		}
		refusals := 0
		for s := &first; s != nil; s = s.Then {
			m, err := s.Model()
			if err != nil {
				return err
			}
			d, err := s.Prepare(m)
			if err != nil {
				return err
			}
			opts := d.Options
			opts.AuditDir, opts.Durability = dir, durability
			if !c.JSON {
				fmt.Fprintf(e.stdout, "== rein demo %s: %s\n", termsafe.Line(s.Name), termsafe.Line(s.Summary))
			}
			out, err := session(ctx, e.stdout, opts, job{Task: d.Task, Expect: s.Expect, Scenario: s.Name, Replies: d.Replies}, c.JSON, false)
			if cerr := d.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("remove the demo's work dir: %w", cerr)
			}
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return exitCode(exitAborted)
			}
			for _, n := range out.Refusals {
				refusals += n
			}
			if out.Stop != s.WantStop || len(out.Outbox) != s.WantOutbox || out.Replies != s.WantReplies {
				deviations++
				fmt.Fprintf(e.stderr, "rein: demo %s did not behave as designed: stop %s, %d mail(s), %d repl(ies); want stop %s, %d, %d\n",
					termsafe.Line(s.Name), termsafe.Line(string(out.Stop)), len(out.Outbox), out.Replies, termsafe.Line(string(s.WantStop)), s.WantOutbox, s.WantReplies)
			}
		}
		if first.Then != nil && !c.JSON {
			fmt.Fprintf(e.stdout, "== %s: %d refusal(s) in all\n", termsafe.Line(first.Name), refusals)
		}
	}
	if deviations > 0 {
		return exitCode(exitError)
	}
	return nil
}

// auditDir picks the audit directory: the flag, then the config, then the default.
func auditDir(flag string, cfg config.Config) (string, error) {
	switch {
	case flag != "":
		return flag, nil
	case cfg.Audit.Dir != "":
		return cfg.Audit.Dir, nil
	}
	return audit.DefaultDir()
}
