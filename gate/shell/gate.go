package shell

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

// Name is the gate's name in verdicts and the audit log.
const Name = "shell"

// Gate judges every command-role argument of a call with Analyze.
type Gate struct {
	pr        prepared
	analyzers sync.Pool // *analyzer with its parser and buffers; reused, never shared
}

var _ gate.Gate = (*Gate)(nil)

// NewGate returns the shell gate for commands run in o.WorkDir.
func NewGate(o Options) *Gate {
	g := &Gate{pr: prepare(o)}
	g.analyzers.New = func() any { return newAnalyzer(newParser()) }
	return g
}

// Name returns "shell".
func (g *Gate) Name() string { return Name }

// Analyze judges one command line with a pooled analyzer.
func (g *Gate) Analyze(src string) Analysis {
	a := g.analyzers.Get().(*analyzer)
	defer g.analyzers.Put(a)
	return analyzeWith(src, &g.pr, a, "", true)
}

// Check judges the call's command arguments. A call whose tool has no
// command argument is allowed; a command argument that is present but not
// a string is refused. When the tool also takes a directory argument (role
// dir), commands are judged as run there.
func (g *Gate) Check(ctx context.Context, c *gate.Call) gate.Verdict {
	if c.Tool == nil {
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "no tool, so no command to check"}
	}
	var buf, dbuf [4]string
	names, dirArgs := roleArgs(c, buf[:0], dbuf[:0])
	if len(names) == 0 {
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "the tool takes no command"}
	}
	v, _ := c.Value()
	_, isObject := v.(map[string]any)
	dir := ""
	for _, n := range dirArgs {
		if d, ok := c.Str(n); ok && d != "" {
			dir = d
			break
		}
	}
	// The findings are lent: they live in the analyzer's buffer until the
	// verdict is made, which happens before the deferred Put.
	a := g.analyzers.Get().(*analyzer)
	defer g.analyzers.Put(a)
	defer a.release()
	a.lend = true
	var all []Finding
	var parseErr error
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return gate.Verdict{Decision: gate.Deny, Gate: Name, Reason: "the check was cancelled: " + err.Error(),
				Hint: "The command could not be checked, so it was refused."}
		}
		src, ok := c.Str(n)
		if !ok {
			if c.Has(n) || !isObject {
				return gate.Verdict{Decision: gate.Deny, Gate: Name,
					Reason: fmt.Sprintf("the command argument %q is not a string", n),
					Hint:   fmt.Sprintf("The argument %q must be a string holding a shell command line.", n)}
			}
			continue
		}
		an := analyzeWith(src, &g.pr, a, dir, false)
		if len(names) == 1 {
			all = an.Findings // the usual one command argument: no copy
		} else {
			all = append(all, an.Findings...) // the next analysis reuses the buffer
		}
		if an.Err != nil && parseErr == nil {
			parseErr = an.Err
		}
	}
	return verdict(all, parseErr)
}

// roleArgs appends to cmds and dirs the names of the call's command and
// directory arguments, each sorted: c.ArgsWith for both roles, in one pass
// over the tool's roles instead of two. c.Tool must not be nil.
func roleArgs(c *gate.Call, cmds, dirs []string) ([]string, []string) {
	for name, role := range c.Tool.Spec().Roles {
		switch role {
		case tool.RoleCommand:
			cmds = append(cmds, name)
		case tool.RoleDir:
			dirs = append(dirs, name)
		}
	}
	slices.Sort(cmds)
	slices.Sort(dirs)
	return cmds, dirs
}

// verdict turns findings into the gate's answer.
func verdict(fs []Finding, err error) gate.Verdict {
	d := gate.Allow
	for _, f := range fs {
		if f.Decision == gate.Deny {
			d = gate.Deny
			break
		}
		if f.Decision == gate.Ask {
			d = gate.Ask
		}
	}
	if err != nil {
		d = gate.Deny
	}
	if d == gate.Allow {
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "no command is refused or needs a yes"}
	}
	// The reason and the hint are written into one string, sized first, and
	// cut apart: one allocation for both.
	var whyBuf [16]string // more than there are reasons
	whys, parse := hintWhys(whyBuf[:0], fs, d, err)
	var errText string
	if parse && err != nil {
		errText = err.Error()
	}
	n := len(hintTail) + 160 + len(errText)
	for _, w := range whys {
		n += len(w) + 6
	}
	for _, f := range fs {
		if f.Decision == d {
			n += len(f.Rule) + len(f.Reason) + len(f.Command) + 7
		}
	}
	var b strings.Builder
	b.Grow(n)
	writeReason(&b, fs, d)
	k := b.Len()
	writeHint(&b, whys, d, parse && err != nil, errText)
	both := b.String()
	return gate.Verdict{Decision: d, Gate: Name, Reason: both[:k], Hint: both[k:]}
}

// writeReason writes "rule: reason [command]; ..." for the findings of d.
func writeReason(b *strings.Builder, fs []Finding, d gate.Decision) {
	start := b.Len()
	for _, f := range fs {
		if f.Decision != d {
			continue
		}
		if b.Len() > start {
			b.WriteString("; ")
		}
		b.WriteString(f.Rule)
		b.WriteString(": ")
		b.WriteString(f.Reason)
		if f.Command != "" {
			b.WriteString(" [")
			b.WriteString(f.Command)
			b.WriteString("]")
		}
	}
}

const hintTail = ". Use a different approach that stays inside the working directory and does not need this; do not try to get around the check."

// hintWhys appends to dst, once each, the general reasons the findings of d
// give, and reports whether one of them is a parse error.
func hintWhys(dst []string, fs []Finding, d gate.Decision, err error) (whys []string, parse bool) {
	for _, f := range fs {
		if f.Decision != d {
			continue
		}
		why := f.id.why()
		if f.id == ruleParseError {
			parse = true
			if err != nil {
				continue
			}
		}
		if !contains(dst, why) {
			dst = append(dst, why)
		}
	}
	return dst, parse
}

// writeHint tells the model, in general terms, why the command was
// refused; parseErr is the text of the line's own parse error, if any.
func writeHint(b *strings.Builder, whys []string, d gate.Decision, parse bool, parseErr string) {
	verb := "was refused"
	if d == gate.Ask {
		verb = "needs a human's approval"
	}
	if parse {
		b.WriteString("This command ")
		b.WriteString(verb)
		b.WriteString(" because it is not valid shell syntax: ")
		b.WriteString(parseErr)
		b.WriteString(". Fix the syntax and try again.")
		if len(whys) == 0 {
			return
		}
		b.WriteString(" Also, ")
	} else {
		b.WriteString("This command ")
		b.WriteString(verb)
		b.WriteString(" because ")
	}
	for i, w := range whys {
		if i > 0 {
			b.WriteString(", and ")
		}
		b.WriteString(w)
	}
	b.WriteString(hintTail)
}
