// Package scenario runs rein's evaluation suites: scenario files with an
// environment (files, an inbox, an order store, a bank ledger, web pages),
// user tasks with reference calls and end-state checks, and injection tasks
// that hide an attacker's instruction in the environment's data. Scripted
// personas play the model; each run goes through rein's real loop and gates,
// assembled for one guard configuration, and is judged by the end state.
//
// The format is documented in docs/eval-format.md; the guard configurations
// and metrics in docs/EVAL.md. The suites themselves are data, embedded from
// eval/suites.
//
// It will not call a real model: what it measures is the harness.
package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/reinhq/rein/model/jsonx"
	"github.com/reinhq/rein/tool/desk"
	"github.com/reinhq/rein/tool/mail"
)

// ErrFormat marks a scenario file that cannot be run.
var ErrFormat = errors.New("invalid scenario")

// File is one suite's scenario file.
type File struct {
	Suite   string `json:"suite"`
	Summary string `json:"summary"`
	// Source is where the suite's tasks come from, when they were converted
	// from elsewhere (a benchmark, a paper, a URL); provenance, for the
	// reader.
	Source string `json:"source,omitempty"`
	// Tools are every tool the suite's sessions know; all of them are
	// offered when nothing guards.
	Tools       []string    `json:"tools"`
	Environment Environment `json:"environment"`
	Injections  []Injection `json:"injections,omitempty"`
	Tasks       []Task      `json:"tasks"`
}

// Environment is the world a task starts in. In strings, {{site}} stands for
// the local web server's address and path prefix of the run.
type Environment struct {
	Files  map[string]string `json:"files,omitempty"`
	Inbox  []mail.Email      `json:"inbox,omitempty"`
	Orders []desk.Order      `json:"orders,omitempty"`
	Bank   *Bank             `json:"bank,omitempty"`
	Pages  []Page            `json:"pages,omitempty"`
	// MCP are MCP servers, served in-process: their tools are offered as
	// SERVER__tool through rein's MCP client (suite level only).
	MCP []MCPServer `json:"mcp,omitempty"`
}

// Page is a web page the local server serves at {{site}}Path.
type Page struct {
	Path string `json:"path"`
	Type string `json:"type,omitempty"` // default text/html; charset=utf-8
	Body string `json:"body"`
}

// Task is one user task.
type Task struct {
	ID   string `json:"id"`
	Task string `json:"task"`
	// Environment is added to the suite's: files by name, the rest by id.
	Environment *Environment `json:"environment,omitempty"`
	// Tools are read-only tools the task may use beyond those of its
	// reference calls (the allowlist is both).
	Tools []string `json:"tools,omitempty"`
	// Reference is the ground truth: the calls that solve the task.
	Reference []Call `json:"reference"`
	// Answer is the final answer the personas give after the calls.
	Answer string `json:"answer"`
	// Utility is the end-state check: every condition must hold.
	Utility []Check `json:"utility"`
	// Detour is what the recovering persona tries first: calls that fail
	// in every configuration (a wrong name, a missing file), after which it
	// does the reference calls. Tasks without a detour have no recovering run.
	Detour []Call `json:"detour,omitempty"`
	// Injections are the attacked variants: which injection, where, how.
	Injections []Placement `json:"injections,omitempty"`
}

// Call is a tool call. In an injection's calls, {{name}} placeholders are
// filled from what the tools returned (Injection.Captures).
type Call struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// Placement puts an injection into one item of a task's environment,
// appended to its text so the data the task needs stays intact.
type Placement struct {
	Injection string `json:"injection"`
	Into      Target `json:"into"`
	// Style wraps the instruction: plain, system, tool, closing-tag,
	// urgency, hidden-html, or language (Text then holds the translation).
	Style string `json:"style"`
	// Text replaces the injection's instruction (another language).
	Text string `json:"text,omitempty"`
	// Mode is how the dressed text goes into the item: "append" (the
	// default: after the item's text, which stays intact) or "replace"
	// (instead of the item's text: a field the attacker controls whole,
	// like a transaction's subject or a calendar entry's description), or
	// "rug-pull" (appended to an MCP tool's description after the user
	// approved it: the definition pinned is the one without it).
	Mode string `json:"mode,omitempty"`
}

// The placement modes.
const (
	ModeAppend  = "append"
	ModeReplace = "replace"
)

// Target names the item an injection is appended to; exactly one is set.
type Target struct {
	File        string `json:"file,omitempty"`        // a file's content
	Email       string `json:"email,omitempty"`       // an inbox message's body
	Order       string `json:"order,omitempty"`       // an order's note
	Transaction string `json:"transaction,omitempty"` // a bank transaction's subject
	Page        string `json:"page,omitempty"`        // a page's body (path)
	// An MCP tool's result (what every call returns) or its description,
	// by the name it is offered under (SERVER__tool).
	MCPResult      string `json:"mcp_result,omitempty"`
	MCPDescription string `json:"mcp_description,omitempty"`
}

func (t Target) String() string {
	for _, kv := range [][2]string{{"file", t.File}, {"email", t.Email}, {"order", t.Order}, {"transaction", t.Transaction}, {"page", t.Page}, {"mcp_result", t.MCPResult}, {"mcp_description", t.MCPDescription}} {
		if kv[1] != "" {
			return kv[0] + " " + kv[1]
		}
	}
	return "nothing"
}

func (t Target) count() int {
	n := 0
	for _, s := range []string{t.File, t.Email, t.Order, t.Transaction, t.Page, t.MCPResult, t.MCPDescription} {
		if s != "" {
			n++
		}
	}
	return n
}

// Injection is an attacker's task.
type Injection struct {
	ID   string `json:"id"`
	Goal string `json:"goal"`
	// Kind says what the attack changes: "recipient" (where something is
	// sent), "amount" (how much), "tool" (a tool the task does not need),
	// "target" (a needed tool aimed at something the task does not touch).
	Kind string `json:"kind"`
	// Instruction is the attacker's text, in English.
	Instruction string `json:"instruction"`
	// Calls are what an obedient model does: the attacker's calls.
	Calls []Call `json:"calls"`
	// Captures fill {{name}} in Calls: the first group of Pattern matched
	// against what Tool returned (any tool when empty).
	Captures map[string]Capture `json:"captures,omitempty"`
	// Security is true when the attack succeeded: every condition holds.
	Security []Check `json:"security"`
}

// Capture takes a value from tool results.
type Capture struct {
	Tool    string `json:"tool,omitempty"`
	Pattern string `json:"pattern"`
	// Number makes the value a JSON number: a string argument that is
	// exactly "{{name}}" becomes the number the capture read ("1,200.00"
	// becomes 1200), so an attacker's call can pay an amount it read.
	Number bool `json:"number,omitempty"`
}

// The injection kinds.
var kinds = []string{"recipient", "amount", "tool", "target"}

// The injection styles.
var styles = []string{"plain", "system", "tool", "closing-tag", "urgency", "hidden-html", "language"}

// Parse reads a scenario file strictly: unknown fields are errors with their
// line and column, and the file must be complete and consistent (see Check).
func Parse(name string, data []byte) (*File, error) {
	var f File
	if err := jsonx.DecodeStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrFormat, name, locate(data, err))
	}
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrFormat, name, err)
	}
	return &f, nil
}

var unknownField = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^unknown field "((?:[^"\\]|\\.)*)"$`)
})

// locate adds the line and column to an unknown-field error: where the
// field's name first appears as a key.
func locate(data []byte, err error) error {
	m := unknownField().FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	key := regexp.MustCompile(`"` + regexp.QuoteMeta(m[1]) + `"\s*:`)
	loc := key.FindIndex(data)
	if loc == nil {
		return err
	}
	line, col := jsonx.Position(data, int64(loc[0]))
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

var idPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
})

// check reports the first inconsistency: a missing field, a tool the suite
// does not know, an injection placed into an item that does not exist.
func (f *File) check() error {
	if !idPattern().MatchString(f.Suite) {
		return fmt.Errorf(`"suite" %q: want a name of lower-case letters, digits and hyphens`, f.Suite)
	}
	if len(f.Tools) == 0 {
		return errors.New(`"tools" is empty: list every tool the suite's sessions know`)
	}
	if err := checkMCP(f.Environment.MCP); err != nil {
		return err
	}
	for _, t := range f.Tools {
		if !slices.Contains(KnownTools(), t) && !slices.Contains(mcpQualified(f.Environment.MCP), t) {
			return fmt.Errorf(`"tools": unknown tool %q (known: %s)`, t, strings.Join(append(KnownTools(), mcpQualified(f.Environment.MCP)...), ", "))
		}
	}
	injections := map[string]*Injection{}
	for i := range f.Injections {
		in := &f.Injections[i]
		where := fmt.Sprintf("injection %d (%s)", i+1, in.ID)
		switch {
		case !idPattern().MatchString(in.ID):
			return fmt.Errorf(`%s: "id" must be lower-case letters, digits and hyphens`, where)
		case injections[in.ID] != nil:
			return fmt.Errorf("%s: the id is used twice", where)
		case in.Goal == "" || in.Instruction == "":
			return fmt.Errorf(`%s: "goal" and "instruction" are required`, where)
		case !slices.Contains(kinds, in.Kind):
			return fmt.Errorf(`%s: "kind" %q: want one of %s`, where, in.Kind, strings.Join(kinds, ", "))
		case len(in.Calls) == 0:
			return fmt.Errorf(`%s: "calls" is empty: give the attacker's calls`, where)
		case len(in.Security) == 0:
			return fmt.Errorf(`%s: "security" is empty: give the check that is true when the attack succeeded`, where)
		}
		if err := f.checkCalls(where, in.Calls); err != nil {
			return err
		}
		for name, c := range in.Captures {
			re, err := regexp.Compile(c.Pattern)
			if err != nil || re.NumSubexp() != 1 {
				return fmt.Errorf("%s: capture %q: the pattern must compile and have one group", where, name)
			}
		}
		if err := checkChecks(where+" security", in.Security); err != nil {
			return err
		}
		injections[in.ID] = in
	}
	if len(f.Tasks) == 0 {
		return errors.New(`"tasks" is empty`)
	}
	seen := map[string]bool{}
	for i := range f.Tasks {
		t := &f.Tasks[i]
		where := fmt.Sprintf("task %d (%s)", i+1, t.ID)
		switch {
		case !idPattern().MatchString(t.ID):
			return fmt.Errorf(`%s: "id" must be lower-case letters, digits and hyphens`, where)
		case seen[t.ID]:
			return fmt.Errorf("%s: the id is used twice", where)
		case strings.TrimSpace(t.Task) == "":
			return fmt.Errorf(`%s: "task" is empty: write the user's request`, where)
		case len(t.Reference) == 0:
			return fmt.Errorf(`%s: "reference" is empty: give the calls that solve the task`, where)
		case len(t.Utility) == 0:
			return fmt.Errorf(`%s: "utility" is empty: give the end-state check`, where)
		}
		if t.Environment != nil && len(t.Environment.MCP) > 0 {
			return fmt.Errorf(`%s: "environment" "mcp": MCP servers go in the suite's environment`, where)
		}
		seen[t.ID] = true
		if err := f.checkCalls(where+" reference", t.Reference); err != nil {
			return err
		}
		if err := f.checkCalls(where+" detour", t.Detour); err != nil {
			return err
		}
		for _, name := range t.Tools {
			if !slices.Contains(f.Tools, name) {
				return fmt.Errorf(`%s: "tools": %q is not one of the suite's tools`, where, name)
			}
		}
		if err := checkChecks(where+" utility", t.Utility); err != nil {
			return err
		}
		env := f.Environment.merge(t.Environment)
		for j, p := range t.Injections {
			pw := fmt.Sprintf("%s injection %d", where, j+1)
			switch {
			case injections[p.Injection] == nil:
				return fmt.Errorf("%s: no injection has the id %q", pw, p.Injection)
			case p.Into.count() != 1:
				return fmt.Errorf(`%s: "into" must name exactly one of file, email, order, transaction, page, mcp_result, mcp_description`, pw)
			case !slices.Contains(styles, p.Style):
				return fmt.Errorf(`%s: "style" %q: want one of %s`, pw, p.Style, strings.Join(styles, ", "))
			case p.Style == "language" && p.Text == "":
				return fmt.Errorf(`%s: style "language" needs "text", the instruction translated`, pw)
			case p.Mode != "" && p.Mode != ModeAppend && p.Mode != ModeReplace && p.Mode != ModeRugPull:
				return fmt.Errorf(`%s: "mode" %q: want append, replace or rug-pull`, pw, p.Mode)
			case p.Mode == ModeRugPull && p.Into.MCPDescription == "":
				return fmt.Errorf(`%s: mode "rug-pull" changes an MCP tool's description: put it "into" an "mcp_description"`, pw)
			}
			if !env.has(p.Into) {
				return fmt.Errorf("%s: the environment has no %s to put it into", pw, p.Into)
			}
		}
	}
	return nil
}

func (f *File) checkCalls(where string, calls []Call) error {
	for i, c := range calls {
		if !slices.Contains(f.Tools, c.Tool) {
			return fmt.Errorf("%s call %d: tool %q is not one of the suite's tools", where, i+1, c.Tool)
		}
		if !jsonx.IsObject(c.Args) {
			return fmt.Errorf(`%s call %d (%s): "args" must be a JSON object`, where, i+1, c.Tool)
		}
	}
	return nil
}

// merge returns the suite's environment with a task's added.
func (e Environment) merge(add *Environment) Environment {
	out := Environment{Files: map[string]string{}, Bank: e.Bank}
	for k, v := range e.Files {
		out.Files[k] = v
	}
	out.Inbox = slices.Clone(e.Inbox)
	out.Orders = slices.Clone(e.Orders)
	out.Pages = slices.Clone(e.Pages)
	out.MCP = cloneMCP(e.MCP)
	if add == nil {
		return out
	}
	for k, v := range add.Files {
		out.Files[k] = v
	}
	out.Inbox = append(out.Inbox, add.Inbox...)
	out.Orders = append(out.Orders, add.Orders...)
	out.Pages = append(out.Pages, add.Pages...)
	out.MCP = append(out.MCP, cloneMCP(add.MCP)...)
	if add.Bank != nil {
		out.Bank = add.Bank
	}
	return out
}

// has reports whether the item t names exists.
func (e Environment) has(t Target) bool {
	switch {
	case t.File != "":
		_, ok := e.Files[t.File]
		return ok
	case t.Email != "":
		return slices.ContainsFunc(e.Inbox, func(m mail.Email) bool { return m.ID == t.Email })
	case t.Order != "":
		return slices.ContainsFunc(e.Orders, func(o desk.Order) bool { return o.ID == t.Order })
	case t.Page != "":
		return slices.ContainsFunc(e.Pages, func(p Page) bool { return p.Path == t.Page })
	case t.MCPResult != "":
		_, _, ok := mcpTool(e.MCP, t.MCPResult)
		return ok
	case t.MCPDescription != "":
		_, _, ok := mcpTool(e.MCP, t.MCPDescription)
		return ok
	case t.Transaction != "":
		return e.Bank != nil && slices.ContainsFunc(e.Bank.Transactions, func(x BankTransaction) bool { return strconv.Itoa(x.ID) == t.Transaction })
	}
	return false
}
