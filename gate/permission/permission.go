// Package permission is the gate of permission modes and rules: what the
// user lets run without asking. It comes after the hard gates (scope, shell,
// network, confirm, limit), which no mode and no rule can override: a Deny
// there is final, and what they ask about is asked in every mode.
//
// Modes:
//   - default: read-only and planning tools run, and so do shell command
//     lines the analyzer proves read-only when a sandbox (landlock, a
//     container) runs them (shell.Analyzer.ReadOnly); everything else asks.
//   - accept-edits: file edits inside the work dir run too; the shell asks.
//   - plan: read-only; writes and the shell are refused.
//   - bypass: everything the hard gates allow runs; what they would ask
//     about is refused instead (see gate.Pipeline.WithoutAsking).
//
// Rules refine a mode per tool and per pattern: a run_bash command prefix,
// matched on the parsed command (never on its text), or a glob over path
// arguments. Deny beats ask beats allow. An allow rule on a command line
// matches only when every command in it matches; a deny or ask rule matches
// when any does, so `go test ./... && curl …` is not allowed by "go test".
package permission

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/cmdline"
	"github.com/reinhq/rein/gate/shell"
	"github.com/reinhq/rein/tool"
)

// Name is the gate's name.
const Name = "permission"

// ReasonReadOnly is the reason of the Allow of a command line the shell
// analyzer proves read-only (shell.Analyzer.ReadOnly) and a sandbox runs.
const ReasonReadOnly = "the command is proven read-only and runs in the sandbox"

// Mode is a permission mode.
type Mode string

// The modes, from the strictest.
const (
	Plan        Mode = "plan"
	Default     Mode = "default"
	AcceptEdits Mode = "accept-edits"
	Bypass      Mode = "bypass"
)

// Modes lists the modes from the strictest.
func Modes() []Mode { return []Mode{Plan, Default, AcceptEdits, Bypass} }

// ParseMode parses a mode name.
func ParseMode(s string) (Mode, error) {
	m := Mode(s)
	if slices.Contains(Modes(), m) {
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q: use plan, default, accept-edits or bypass", s)
}

// Looser reports whether m lets more run without a human than other.
func (m Mode) Looser(other Mode) bool {
	return slices.Index(Modes(), m) > slices.Index(Modes(), other)
}

// Rule allows, asks about or denies calls of one tool, optionally only those
// matching a command prefix or a path glob.
type Rule struct {
	// Tool is the tool's name; "*" means every tool.
	Tool string `toml:"tool" json:"tool"`
	// Decision is "allow", "ask" or "deny".
	Decision string `toml:"decision" json:"decision"`
	// Command is a command prefix in words ("go test"), for tools with a
	// command argument. An allow rule's first word matches the program as
	// written: "go" matches only a bare go (found on PATH), not "./go" or
	// "/tmp/go"; write the path in the rule to allow a path. Ask and deny
	// rules match the program by its basename, wherever it is.
	Command string `toml:"command" json:"command,omitempty"`
	// Path is a glob over the call's path arguments ("docs/**", "*.lock").
	Path string `toml:"path" json:"path,omitempty"`
	// Exact makes an allow rule's Command match only a command of exactly
	// those words, not one that adds arguments: the rule an "always"
	// answer saves (gate.RuleSaver) covers what the human was shown and
	// nothing wider. Ask and deny rules match as prefixes regardless.
	Exact bool `toml:"exact" json:"exact,omitempty"`
	// Match and NoMatch are examples (command lines, or paths) the rule must
	// and must not match; they are checked when the rule is compiled.
	Match   []string `toml:"match" json:"match,omitempty"`
	NoMatch []string `toml:"no_match" json:"no_match,omitempty"`
}

type rule struct {
	Rule
	decision gate.Decision
	words    []string
	exact    []string // an Exact rule's words as written (the program not cut to its basename)
}

// Gate applies a mode and rules.
type Gate struct {
	mode  Mode
	rules []rule
	sh    *shell.Analyzer // the call's command lines, analysed once for every gate (shell.Analyzer.Call)
	allow string          // the reason of the mode's Allow, made once
}

var _ gate.Gate = (*Gate)(nil)

// NewGate compiles the rules for a mode. sh tells the shell parser where
// the work dir is. A rule that is malformed, or that does not match its own
// examples, is an error naming the rule.
func NewGate(mode Mode, rules []Rule, sh shell.Options) (*Gate, error) {
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, err
	}
	g := &Gate{mode: mode, sh: shell.NewAnalyzer(sh), allow: fmt.Sprintf("%s mode allows it", mode)}
	for i, r := range rules {
		cr, err := compile(r, sh)
		if err != nil {
			return nil, fmt.Errorf("permission rule %d (tool %q): %w", i+1, r.Tool, err)
		}
		g.rules = append(g.rules, cr)
	}
	return g, nil
}

func compile(r Rule, sh shell.Options) (rule, error) {
	cr := rule{Rule: r}
	if r.Tool == "" {
		return cr, fmt.Errorf(`"tool" is required (a tool name, or "*")`)
	}
	if err := cr.decision.UnmarshalText([]byte(r.Decision)); err != nil {
		return cr, err
	}
	if r.Exact && r.Command == "" {
		return cr, fmt.Errorf(`"exact" needs a "command"`)
	}
	if r.Command != "" && r.Path != "" {
		return cr, fmt.Errorf("a rule has a command or a path, not both: write two rules")
	}
	if r.Command != "" {
		a := shell.Analyze(r.Command, sh)
		if a.Err != nil || len(a.Commands) != 1 || a.Commands[0].Dynamic || a.Commands[0].Name == "" {
			return cr, fmt.Errorf("command %q must be one plain command prefix, like \"go test\"", r.Command)
		}
		cr.words = append([]string{a.Commands[0].Program}, a.Commands[0].Args...)
		if r.Exact {
			l := cmdline.Parse(nil, "command", r.Command)
			words, ok := []string(nil), false
			if l.File != nil {
				words, ok = gate.PlainCommand(l.File)
			}
			if !ok {
				return cr, fmt.Errorf("command %q must be one command of literal words for an exact rule", r.Command)
			}
			cr.exact = words
		}
	}
	if r.Path != "" {
		if _, err := path.Match(strings.TrimSuffix(r.Path, "/**"), "x"); err != nil {
			return cr, fmt.Errorf("path %q is not a valid glob: %w", r.Path, err)
		}
	}
	if (len(r.Match) > 0 || len(r.NoMatch) > 0) && r.Command == "" && r.Path == "" {
		return cr, fmt.Errorf("examples need a command or a path to match against")
	}
	for _, ex := range r.Match {
		if !cr.matchExample(ex, sh) {
			return cr, fmt.Errorf("the rule does not match its example %q", ex)
		}
	}
	for _, ex := range r.NoMatch {
		if cr.matchExample(ex, sh) {
			return cr, fmt.Errorf("the rule matches %q, which it must not match", ex)
		}
	}
	return cr, nil
}

func (r *rule) matchExample(ex string, sh shell.Options) bool {
	if r.Command != "" {
		if r.exact != nil && r.decision == gate.Allow {
			l := cmdline.Parse(nil, "command", ex)
			if l.File == nil {
				return false
			}
			if words, ok := gate.PlainCommand(l.File); !ok || !slices.Equal(words, r.exact) {
				return false
			}
		}
		return r.matchCommand(shell.Analyze(ex, sh))
	}
	return r.matchPaths([]string{ex})
}

// matchCommand: an allow rule needs every command to match, others any.
func (r *rule) matchCommand(a shell.Analysis) bool {
	if a.Err != nil || len(a.Commands) == 0 {
		return r.decision != gate.Allow && a.Err != nil // an unparsable line is never allowed by a rule
	}
	all, any := true, false
	for _, c := range a.Commands {
		var ok bool
		if r.decision == gate.Allow {
			ok = !c.Dynamic && prefix(r.words, c) && (!r.Exact || len(c.Args) == len(r.words)-1)
		} else {
			ok = mayPrefix(r.words, c)
		}
		all, any = all && ok, any || ok
	}
	if r.decision == gate.Allow {
		return all && a.Decision == gate.Allow
	}
	return any
}

// mayPrefix reports whether c may start with words when it runs, for deny
// and ask rules: its literal words match up to the first argument only
// known at run time, which may stand for the rest (git add $(ls) and
// xargs git add -A both may be "git add -A"). The command's name must be
// literal: a dynamic name is refused by the shell gate.
func mayPrefix(words []string, c shell.Command) bool {
	if len(words) == 0 || c.Name == "" || c.Name != path.Base(words[0]) {
		return false
	}
	for i, w := range words[1:] {
		if i < len(c.Unknown) && c.Unknown[i] {
			return true
		}
		if i >= len(c.Args) || c.Args[i] != w {
			return false
		}
	}
	return true
}

// prefix is an allow rule's match. Its program is matched as written: a
// rule for "go" matches only a bare "go" (found on PATH), never "./go" or
// "/tmp/x/go", which could be a program the agent wrote; a rule written
// with a path ("/usr/local/go/bin/go test") matches exactly that path.
// Ask and deny rules match the basename (mayPrefix): wider is stricter.
func prefix(words []string, c shell.Command) bool {
	if len(words) == 0 || c.Name != path.Base(words[0]) || len(c.Args) < len(words)-1 {
		return false
	}
	if strings.Contains(words[0], "/") {
		if path.Clean(c.Program) != path.Clean(words[0]) {
			return false
		}
	} else if c.Program != words[0] {
		return false
	}
	for i, w := range words[1:] {
		if c.Args[i] != w {
			return false
		}
	}
	return true
}

func (r *rule) matchPaths(paths []string) bool {
	if len(paths) == 0 {
		return false
	}
	all, any := true, false
	for _, p := range paths {
		ok := globMatch(r.Path, path.Clean(strings.TrimPrefix(p, "./")))
		all, any = all && ok, any || ok
	}
	if r.decision == gate.Allow {
		return all
	}
	return any
}

// globMatch is path.Match, with a trailing "/**" meaning "anything under".
func globMatch(pattern, p string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/**"); ok {
		if m, _ := path.Match(dir, p); m {
			return true
		}
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			if m, _ := path.Match(dir, d); m {
				return true
			}
		}
		return false
	}
	m, _ := path.Match(pattern, p)
	return m
}

// matches reports whether the rule applies to the call. Command rules read
// the analysis of the call's command lines that the shell gate made
// (shell.Analyzer.Call), or make it when no shell gate ran.
func (r *rule) matches(c *gate.Call, sh *shell.Analyzer) bool {
	if r.Tool != "*" && r.Tool != c.Name {
		return false
	}
	switch {
	case r.Command != "":
		if r.exact != nil && r.decision == gate.Allow {
			// Exactly the command shown when it was saved: its words as
			// written, so "./go test" is not "go test".
			if p, ok := gate.PatternOf(c); !ok || p.Dir != "" || !slices.Equal(p.Command, r.exact) {
				return false
			}
		}
		list := sh.Call(c)
		matched := 0
		for _, a := range list {
			if r.matchCommand(a) {
				matched++
			}
		}
		if r.decision == gate.Allow {
			return len(list) > 0 && matched == len(list)
		}
		return matched > 0
	case r.Path != "":
		var paths []string
		for _, p := range c.Paths() {
			if p.String {
				paths = append(paths, p.Clean)
			}
		}
		return r.matchPaths(paths)
	}
	return true
}

// Name returns "permission".
func (*Gate) Name() string { return Name }

// Mode returns the gate's mode.
func (g *Gate) Mode() Mode { return g.mode }

// Check applies the rules, then the mode.
func (g *Gate) Check(ctx context.Context, c *gate.Call) gate.Verdict {
	if c.Tool == nil {
		return gate.UnknownTool(c.Name)
	}
	spec := c.Tool.Spec()
	effect := c.Effect(ctx) // this call's class (tool.Effector), as confirm and the limit read it
	var hit *rule
	for i := range g.rules {
		r := &g.rules[i]
		if (hit == nil || r.decision < hit.decision) && r.matches(c, g.sh) {
			hit = r // the strictest matching rule wins (Deny < Ask < Allow)
		}
	}
	if g.mode == Plan && effect != tool.ReadOnly {
		return gate.Verdict{Decision: gate.Deny, Gate: Name,
			Reason: fmt.Sprintf("plan mode is read-only and %s is %s", c.Name, effect),
			Hint:   fmt.Sprintf("This session is in plan mode: it may read and plan, not change anything, so %s did not run. Write the plan instead; the user will carry it out.", c.Name)}
	}
	if hit != nil {
		return ruleVerdict(hit, c)
	}
	switch {
	case effect == tool.ReadOnly || g.mode == Bypass:
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: g.allow}
	case g.mode == AcceptEdits && isEdit(spec, effect):
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "accept-edits mode allows file edits inside the work dir"}
	case g.mode != Plan && len(spec.ArgsWith(tool.RoleCommand)) > 0:
		if ok, _ := g.sh.ReadOnly(c); ok {
			return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: ReasonReadOnly}
		}
	}
	return gate.Verdict{Decision: gate.Ask, Gate: Name,
		Reason: fmt.Sprintf("%s mode asks before %s (%s)", g.mode, c.Name, effect)}
}

func ruleVerdict(r *rule, c *gate.Call) gate.Verdict {
	what := "tool " + r.Tool
	switch {
	case r.Command != "":
		what = fmt.Sprintf("%s command %q", r.Tool, r.Command)
	case r.Path != "":
		what = fmt.Sprintf("%s path %q", r.Tool, r.Path)
	}
	v := gate.Verdict{Decision: r.decision, Gate: Name, Reason: fmt.Sprintf("rule: %s %s", r.Decision, what)}
	if r.decision == gate.Deny {
		v.Hint = fmt.Sprintf("The user's settings do not allow this %s call. Do not retry it; use another way or tell the user what you need.", c.Name)
	}
	return v
}

// isEdit reports whether a call of a tool edits files and nothing else:
// reversible, with a path argument and no command or URL.
func isEdit(s tool.Spec, effect tool.Effect) bool {
	return effect == tool.Reversible && len(s.ArgsWith(tool.RolePath)) > 0 &&
		len(s.ArgsWith(tool.RoleCommand)) == 0 && len(s.ArgsWith(tool.RoleURL)) == 0
}
