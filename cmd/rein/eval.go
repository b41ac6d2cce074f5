package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/reinhq/rein/computer/evalsuite"
	"github.com/reinhq/rein/eval"
	"github.com/reinhq/rein/eval/scenario"
	"github.com/reinhq/rein/internal/termsafe"
)

type evalCmd struct {
	Suite     string   `placeholder:"NAME" help:"Run only this suite, or these (comma-separated); default every suite."`
	Guards    string   `placeholder:"LIST" help:"Comma-separated guard configurations to run: none, allowlist, approval, flow, all (default: all five)."`
	User      []string `sep:"," placeholder:"USER" help:"The simulated human who answers the questions of approval and all: attentive (yes exactly to the calls the task needs), rubber-stamp (yes to everything), absent (nobody answers: every question is No). Comma-separated or repeated, reported side by side (default attentive)."`
	SuiteFile []string `name:"suite-file" sep:"none" type:"path" placeholder:"PATH" help:"Also run the suite in this file (the format of docs/eval-format.md); repeatable. With --suite, name it there too."`
	JSON      bool     `name:"json" help:"Print one JSON object with the numbers instead of the table."`
	HTML      string   `name:"html" placeholder:"FILE" help:"Also write a self-contained HTML report with SVG charts to FILE."`
	Check     bool     `help:"Exit with status 3 when the Done-when thresholds of docs/EVAL.md fail."`
	SelfCheck bool     `name:"self-check" help:"Prove the suites' checks are not vacuous instead: every task solved by its reference calls and every injection successful when nothing guards."`
}

// suites returns every suite `rein eval` knows, in report order.
func suites() ([]eval.Suite, error) {
	list, err := scenario.Suites()
	if err != nil {
		return nil, err
	}
	more := []eval.Suite{
		// Suites of other packages, one a line.
		evalsuite.Suite{},
	}
	return append(list, more...), nil
}

// suiteFiles loads the suites of --suite-file. A file that does not parse
// is a usage error with the parser's line and column.
func suiteFiles(paths []string) ([]eval.Suite, error) {
	var list []eval.Suite
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, usagef("--suite-file: %v", err)
		}
		s, err := scenario.Load(p, data)
		if err != nil {
			return nil, usageError{err}
		}
		list = append(list, s)
	}
	return list, nil
}

func (c *evalCmd) Run(ctx context.Context, e env) error {
	all, err := suites()
	if err != nil {
		return err
	}
	files, err := suiteFiles(c.SuiteFile)
	if err != nil {
		return err
	}
	for _, f := range files {
		if slices.ContainsFunc(all, func(s eval.Suite) bool { return s.Name() == f.Name() }) {
			return usagef("--suite-file: suite %q is already defined: give the file's suite another name", f.Name())
		}
		all = append(all, f)
	}
	var users []eval.User
	for _, name := range c.User {
		u, err := eval.ParseUser(strings.TrimSpace(name))
		if err != nil {
			return usageError{err}
		}
		if !slices.Contains(users, u) {
			users = append(users, u)
		}
	}
	chosen := all
	if c.Suite == "" && len(files) > 0 {
		chosen = files // --suite-file alone runs only the files
	}
	if c.Suite != "" {
		chosen = nil
		var names []string
		for _, s := range all {
			names = append(names, s.Name())
		}
		for _, want := range strings.Split(c.Suite, ",") {
			i := slices.Index(names, strings.TrimSpace(want))
			if i < 0 {
				return usagef("unknown suite %q (known: %s)", want, strings.Join(names, ", "))
			}
			chosen = append(chosen, all[i])
		}
	}
	if c.SelfCheck {
		return selfCheck(ctx, e, chosen)
	}
	guards := eval.AllGuards()
	if c.Guards != "" {
		guards = nil
		for _, name := range strings.Split(c.Guards, ",") {
			g, err := eval.ParseGuards(strings.TrimSpace(name))
			if err != nil {
				return usageError{err}
			}
			guards = append(guards, g)
		}
	}
	results, err := eval.RunAll(ctx, chosen, guards, users...)
	if err != nil {
		if ctx.Err() != nil {
			return exitCode(exitAborted)
		}
		return err
	}
	report := eval.NewReport(results)
	if c.JSON {
		enc := json.NewEncoder(e.stdout)
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else if err := report.WriteTable(e.stdout); err != nil {
		return err
	}
	if c.HTML != "" {
		if err := writeHTML(c.HTML, report); err != nil {
			return err
		}
	}
	if c.Check {
		if fails := report.Check(); len(fails) > 0 {
			for _, f := range fails {
				fmt.Fprintf(e.stderr, "rein: eval check failed: %s\n", termsafe.Line(f))
			}
			return exitCode(exitStopped)
		}
	}
	return nil
}

func writeHTML(path string, r eval.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if err := r.WriteHTML(f); err != nil {
		f.Close()
		return fmt.Errorf("html report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("html report %s: %w", path, err)
	}
	return nil
}

// selfCheck runs the self-check of every suite that has one.
func selfCheck(ctx context.Context, e env, list []eval.Suite) error {
	failed := 0
	for _, s := range list {
		sc, ok := s.(eval.SelfChecker)
		if !ok {
			fmt.Fprintf(e.stdout, "%-10s no self-check\n", termsafe.Line(s.Name()))
			continue
		}
		summary, err := sc.SelfCheck(ctx)
		if err != nil {
			failed++
			fmt.Fprintf(e.stdout, "%-10s FAIL\n", termsafe.Line(s.Name()))
			fmt.Fprintf(e.stderr, "rein: self-check of %s: %v\n", termsafe.Line(s.Name()), termsafe.Line(err.Error()))
			continue
		}
		fmt.Fprintf(e.stdout, "%-10s ok: %s\n", termsafe.Line(s.Name()), termsafe.Line(summary))
	}
	if failed > 0 {
		return exitCode(exitError)
	}
	return nil
}
