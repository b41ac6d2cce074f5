package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/eval"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/internal/tui"
)

// tracer prints a session as a readable trace, one audit record at a time:
// the step and cumulative tokens with the model's text, each call, its
// verdict when it was refused or needed approval, and its shortened result.
type tracer struct {
	w        io.Writer
	auditDir string
	styles   *tui.Styles // colours for approvals and refusals; nil: none
}

// mark colours line as allowed (good) or refused.
func (t *tracer) mark(good bool, line string) string {
	line = termsafe.Line(line) // idempotent on a line already made safe
	if t.styles == nil {
		return line
	}
	if good {
		return t.styles.Good.Render(line)
	}
	return t.styles.Bad.Render(line)
}

func (t *tracer) observe(r audit.Record) {
	switch r.Type {
	case audit.SessionStart:
		t.start(r)
	case audit.ModelCall:
		if r.Error != "" {
			fmt.Fprintf(t.w, "step %d | model call failed: %s\n", r.Step, termsafe.Line(r.Error))
			return
		}
		fmt.Fprintf(t.w, "step %d | %6d tokens | %s\n", r.Step, r.Tokens, clip(r.Text, 72))
	case audit.Verdict:
		t.verdict(r)
	case audit.Intent:
		fmt.Fprintf(t.w, "        -> %s\n", callText(r.Tool, r.Args))
	case audit.Result:
		mark := "<-"
		if r.IsError {
			mark = "<- error:"
		}
		fmt.Fprintf(t.w, "        %s %s\n", termsafe.Line(mark), shorten(strings.TrimPrefix(r.Content, "Error: "), 96))
	}
}

func (t *tracer) start(r audit.Record) {
	var cfg struct {
		Model string   `json:"model"`
		Tools []string `json:"tools"`
	}
	_ = json.Unmarshal(r.Config, &cfg) // the record was written by this process; a miss only shortens the header
	fmt.Fprintf(t.w, "task: %s\n", termsafe.Line(r.Task))
	fmt.Fprintf(t.w, "model: %s\n", termsafe.Line(cfg.Model))
	fmt.Fprintf(t.w, "allowed: %s\n", termsafe.Line(strings.Join(cfg.Tools, ", ")))
	fmt.Fprintf(t.w, "audit: %s\n", termsafe.Line(audit.FileName(t.auditDir, r.Session)))
}

func (t *tracer) verdict(r audit.Record) {
	switch {
	case r.Gate == gate.NameBudget:
		fmt.Fprintf(t.w, "        %s\n", t.mark(false, "xx stopped by budget: "+termsafe.Line(r.Reason)))
	case r.Decision.Is(gate.Deny):
		fmt.Fprintf(t.w, "        -> %s\n", callText(r.Tool, r.Args))
		fmt.Fprintf(t.w, "        %s\n", t.mark(false, "xx refused by "+termsafe.Line(r.Gate)+": "+termsafe.Line(r.Reason)))
	case r.Gate == gate.NameApproval:
		fmt.Fprintf(t.w, "        %s\n", t.mark(true, "ok approved: "+termsafe.Line(r.Reason)))
	}
}

// summary prints the end of a session: stop, answer, outbox and check.
func (t *tracer) summary(o *outcome) {
	fmt.Fprintf(t.w, "STOP: %s after %d steps and %d tokens\n", termsafe.Line(string(o.Stop)), o.Steps, o.Tokens)
	if o.Err != nil && o.Stop != agent.StopDone {
		fmt.Fprintf(t.w, "why: %s\n", termsafe.Text(o.Err.Error()))
	}
	if o.Answer != "" {
		fmt.Fprintf(t.w, "answer: %s\n", termsafe.Text(o.Answer))
	}
	if len(o.Refusals) > 0 {
		fmt.Fprintf(t.w, "refusals: %s\n", refusalText(o.Refusals))
	}
	fmt.Fprintf(t.w, "outbox: %d message(s)\n", len(o.Outbox))
	for _, m := range o.Outbox {
		fmt.Fprintf(t.w, "        to %s: %s\n", termsafe.Line(m.To), shorten(m.Body, 72))
	}
	if o.Check != eval.CheckNone {
		fmt.Fprintf(t.w, "check against ground truth (%s): %s\n", termsafe.Line(o.Expect), termsafe.Line(string(o.Check)))
	}
	if len(o.Changed) > 0 {
		fmt.Fprintf(t.w, "files changed: %s\n", termsafe.Line(strings.Join(o.Changed, ", ")))
		if o.RollbackDir != "" {
			fmt.Fprintf(t.w, "undo with: rein rollback %s\n", termsafe.Line(o.Session))
		}
	}
	if o.Unsaved > 0 {
		fmt.Fprintf(t.w, "rollback: %d change(s) could not be saved for rollback and were refused: the store in %s could not be written (full or read-only?)\n", o.Unsaved, termsafe.Line(o.RollbackDir))
	}
	if o.Unsettled > 0 {
		fmt.Fprintf(t.w, "rollback: %d change(s) ran, but what they left could not be recorded; rein rollback restores those files and keeps a copy of what is there\n", o.Unsettled)
	}
}

func refusalText(by map[string]int) string {
	var parts []string
	for _, g := range slices.Sorted(maps.Keys(by)) {
		parts = append(parts, fmt.Sprintf("%s %d", termsafe.Line(g), by[g]))
	}
	return strings.Join(parts, ", ")
}

func callText(tool string, args json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		b.Reset()
		b.Write(args)
	}
	return shorten(tool+"("+b.String()+")", 96)
}

// clip puts text on one line, makes it safe for the terminal
// (termsafe.Line) and cuts it to n characters.
func clip(s string, n int) string {
	s = termsafe.Line(oneLine(s))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// oneLine joins the non-blank lines of s with " / " and folds white space.
func oneLine(s string) string {
	var lines []string
	for l := range strings.Lines(s) {
		if f := strings.Fields(l); len(f) > 0 {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	return strings.Join(lines, " / ")
}

// shorten puts text on one line and, when it is longer than n characters,
// keeps its head and tail around an ellipsis: the start says what it is, the
// end often says whether it was cut. The text is made safe for the
// terminal first (termsafe.Line).
func shorten(s string, n int) string {
	s = termsafe.Line(oneLine(s))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	head := n / 3
	tail := n - head - 3
	return string(r[:head]) + " … " + string(r[len(r)-tail:])
}
