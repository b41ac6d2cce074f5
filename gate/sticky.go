package gate

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/tool"
)

// Sticky answers. A human asked about a call may answer for the rest of
// the session (approve.Session) or for good (approve.Always, saved in the
// user's own config by a RuleSaver). The answer covers the call's pattern
// (PatternOf) and nothing wider: a later call is covered only when its
// pattern is the same string. A sticky yes answers only the gates that
// asked when it was given: a later call of the same pattern that another
// gate asks about (a protected path a symbolic link now leads to, a value
// from a tool result) is asked about again, and a Deny is final whatever
// was answered. A sticky no refuses every later call of its pattern that
// a gate asks about.

// Pattern is what a sticky answer covers, the text approve.Request.Pattern
// shows the human.
type Pattern struct {
	Tool string
	// Command is the words of the one command the call's command line
	// runs, quotes removed, when the tool runs a command.
	Command []string
	// Dir is the directory argument the command runs in, "" for the work dir.
	Dir string
	// Path is the one path argument of a file tool, as given (it is clean).
	Path string
}

// String renders the pattern: the command with shell quoting where a word
// needs it ("git status", "go test ./..."), followed by " (in DIR)" when
// it runs elsewhere than the work dir; or "TOOL path=PATH".
func (p Pattern) String() string {
	if len(p.Command) > 0 {
		q := make([]string, len(p.Command))
		for i, w := range p.Command {
			q[i] = shellQuote(w)
		}
		s := strings.Join(q, " ")
		if p.Dir != "" {
			s += " (in " + shellQuote(p.Dir) + ")"
		}
		return s
	}
	if p.Path != "" {
		return p.Tool + " path=" + shellQuote(p.Path)
	}
	return ""
}

func shellQuote(w string) string {
	if q, err := syntax.Quote(w, syntax.LangBash); err == nil {
		return q
	}
	return fmt.Sprintf("%q", w)
}

// PatternOf returns the pattern a sticky answer to c would cover, and
// false when c gets none (then only a yes or no for this call exists):
//
//   - a tool with a command argument: the line must be one simple command
//     of literal words (quotes allowed), with no redirection, assignment,
//     substitution, expansion, glob, second command or background job, so
//     the pattern is exactly what runs. Besides a directory argument
//     (kept in the pattern), the tool may take no path argument.
//   - a tool with path arguments and no command: exactly one path, given
//     clean and relative ("src/a.go", not "./src/a.go", "src/../x" or
//     "/abs"), and no URL argument.
//
// Other tools (a payment, an email) get none: each call is asked about.
func PatternOf(c *Call) (Pattern, bool) {
	if c.Tool == nil {
		return Pattern{}, false
	}
	var buf [4]string
	cmds := c.ArgsWith(buf[:0], tool.RoleCommand)
	var ubuf [4]string
	if len(c.ArgsWith(ubuf[:0], tool.RoleURL)) > 0 {
		return Pattern{}, false
	}
	paths := c.Paths()
	if len(cmds) > 0 {
		lines := c.Commands()
		if len(cmds) != 1 || len(lines) != 1 || lines[0].File == nil {
			return Pattern{}, false
		}
		words, ok := PlainCommand(lines[0].File)
		if !ok {
			return Pattern{}, false
		}
		p := Pattern{Tool: c.Name, Command: words}
		for _, pa := range paths {
			if pa.Role != tool.RoleDir || !pa.String {
				return Pattern{}, false
			}
			if pa.Value != "" {
				if p.Dir != "" {
					return Pattern{}, false
				}
				p.Dir = pa.Value
			}
		}
		return p, true
	}
	if len(paths) != 1 || !paths[0].String {
		return Pattern{}, false
	}
	v := paths[0].Value
	if v == "" || v != paths[0].Clean || path.IsAbs(v) || v == ".." || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~") {
		return Pattern{}, false
	}
	return Pattern{Tool: c.Name, Path: v}, true
}

// PlainCommand returns the words of f, quotes removed, when f is one
// simple command of literal words and nothing else (no redirection,
// assignment, expansion, glob, second command or background job): the
// command a sticky answer's pattern names.
func PlainCommand(f *syntax.File) ([]string, bool) {
	if len(f.Stmts) != 1 {
		return nil, false
	}
	s := f.Stmts[0]
	if s.Negated || s.Background || s.Coprocess || s.Disown || len(s.Redirs) > 0 {
		return nil, false
	}
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 || len(ce.Args) == 0 {
		return nil, false
	}
	words := make([]string, 0, len(ce.Args))
	for _, w := range ce.Args {
		v, ok := literalWord(w)
		if !ok {
			return nil, false
		}
		words = append(words, v)
	}
	return words, true
}

// literalWord returns the value of a word the shell does not expand:
// plain text without glob, brace, tilde or escape characters, and quoted
// text without expansions.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(x.Value, "*?[]{}\\~") {
				return "", false
			}
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			if x.Dollar {
				return "", false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(l.Value, "\\$`") {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// RuleSaver saves an "always" answer as a rule in the user's own config
// (never the project's). The rule covers exactly the pattern.
type RuleSaver interface {
	SaveRule(ctx context.Context, p Pattern, yes bool) error
}

// sessionRule is a sticky answer in force.
type sessionRule struct {
	yes   bool
	gates []string // the gates that asked when it was given (a yes answers only them)
	ans   approve.Answer
}

// sessionRules are a pipeline's sticky answers, by tool and pattern.
type sessionRules struct {
	mu    sync.Mutex
	rules map[[2]string]sessionRule
	saver RuleSaver
}

func (s *sessionRules) lookup(toolName, pattern string) (sessionRule, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rules[[2]string{toolName, pattern}]
	return r, ok
}

func (s *sessionRules) add(toolName, pattern string, r sessionRule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rules == nil {
		s.rules = map[[2]string]sessionRule{}
	}
	s.rules[[2]string{toolName, pattern}] = r
}

// WithStickyAnswers lets the humans asked by this pipeline answer for the
// session or for good: requests carry a Pattern when the call has one
// (PatternOf), and an answer with a wider scope becomes a session rule
// that the pipeline consults before it asks again. saver, when not nil,
// saves "always" answers as rules in the user's config. It returns p.
func (p *Pipeline) WithStickyAnswers(saver RuleSaver) *Pipeline {
	p.sticky = &sessionRules{saver: saver}
	return p
}

// covers reports whether every gate in asked is in gates.
func covers(gates, asked []string) bool {
	for _, a := range asked {
		if !slices.Contains(gates, a) {
			return false
		}
	}
	return true
}

// sessionVerdict applies a session rule in force to a call a gate asked
// about (v), or reports that none does.
func (p *Pipeline) sessionVerdict(c *Call, v Verdict, pattern string, asked []string) (Verdict, bool) {
	r, ok := p.sticky.lookup(c.Name, pattern)
	if !ok {
		return Verdict{}, false
	}
	ans := r.ans
	ans.By = "rule:" + ans.Scope.String()
	switch {
	case !r.yes:
		return Verdict{Decision: Deny, Gate: NameApproval, Answer: &ans,
			Reason: fmt.Sprintf("%s (asked by %s): the user said no to %q for this session", v.Reason, v.Gate, pattern),
			Hint: fmt.Sprintf("The user said no to %s for this session, so it did not run. Do not try it again; "+
				"carry on without it and tell the user what was not done.", pattern)}, true
	case covers(r.gates, asked):
		return Verdict{Decision: Allow, Gate: NameApproval, Answer: &ans,
			Reason: fmt.Sprintf("%s (asked by %s): the user said yes to %q for this session", v.Reason, v.Gate, pattern)}, true
	}
	return Verdict{}, false // another gate asks now: the human is asked
}
