package shell

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/cmdline"
	"github.com/reinhq/rein/tool"
)

// Name is the gate's name in verdicts and the audit log.
const Name = "shell"

// Gate judges every command-role argument of a call: the analysis of the
// command lines the call parsed (Analyzer.Call), which it leaves in the
// call for the gates after it (the permission gate's command rules).
type Gate struct {
	z *Analyzer
}

var _ gate.Gate = (*Gate)(nil)

// NewGate returns the shell gate for commands run in o.WorkDir.
func NewGate(o Options) *Gate { return &Gate{z: NewAnalyzer(o)} }

// Name returns "shell".
func (g *Gate) Name() string { return Name }

// Analyze judges one command line with a pooled analyzer.
func (g *Gate) Analyze(src string) Analysis { return g.z.Analyze(src) }

// Analyzer judges command lines under one Options, with pooled analyzers.
// It is safe for concurrent use.
type Analyzer struct {
	key       any       // analysesKey{o}, made into an interface value once
	execTool  string    // Options.ExecTool
	strict    *Analyzer // for calls of other tools than execTool: no sandbox; nil when Exec is zero or applies to all
	pr        prepared
	analyzers sync.Pool // *analyzer with its parser and buffers; reused, never shared
}

// NewAnalyzer returns the analyzer of command lines run under o.
func NewAnalyzer(o Options) *Analyzer {
	z := &Analyzer{key: analysesKey{o}, pr: prepare(o), execTool: o.ExecTool}
	z.analyzers.New = func() any { return newAnalyzer(newParser()) }
	if o.ExecTool != "" && o.Exec != (Executor{}) {
		strict := o
		strict.Exec, strict.ExecTool = Executor{}, ""
		z.strict = NewAnalyzer(strict)
	}
	return z
}

// Analyze judges one command line.
func (z *Analyzer) Analyze(src string) Analysis {
	a := z.analyzers.Get().(*analyzer)
	defer z.analyzers.Put(a)
	return analyzeWith(cmdline.Line{Src: src}, &z.pr, a, "", true)
}

// analysesKey is the slot of a call's analyses under one Options: equal
// Options judge alike, so the shell gate and the permission gate of a
// session share one analysis of each command line.
type analysesKey struct{ o Options }

// Call returns the analysis of each of the call's command lines
// (gate.Call.Commands, in the same order), as run in the call's first
// non-empty directory argument (role dir), by the executor Options.Exec
// describes when the call's tool is Options.ExecTool, else unsandboxed. It walks the trees
// Commands parsed, and is computed once per call and Options — by the
// shell gate, or by whichever gate asks first — and kept in the call
// (gate.Call.Memo). The analyses must not be changed.
func (z *Analyzer) Call(c *gate.Call) []Analysis {
	if z.strict != nil && c.Name != z.execTool {
		return z.strict.Call(c) // its commands do not run in the executor Exec describes
	}
	return *c.Memo(z.key, func() any { return z.call(c) }).(*[]Analysis)
}

func (z *Analyzer) call(c *gate.Call) *[]Analysis {
	lines := c.Commands()
	if len(lines) == 0 {
		return new([]Analysis)
	}
	dir := ""
	if c.Tool != nil {
		var dbuf [4]string
		for _, n := range c.ArgsWith(dbuf[:0], tool.RoleDir) {
			if d, ok := c.Str(n); ok && d != "" {
				dir = d
				break
			}
		}
	}
	a := z.analyzers.Get().(*analyzer)
	defer z.analyzers.Put(a)
	out := make([]Analysis, len(lines))
	for i, l := range lines {
		out[i] = analyzeWith(l, &z.pr, a, dir, true)
	}
	return &out
}

// Check judges the call's command arguments. A call whose tool has no
// command argument is allowed; a command argument that is present but not
// a string is refused. When the tool also takes a directory argument (role
// dir), commands are judged as run there.
func (g *Gate) Check(ctx context.Context, c *gate.Call) gate.Verdict {
	if c.Tool == nil {
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "no tool, so no command to check"}
	}
	var buf [4]string
	names := c.ArgsWith(buf[:0], tool.RoleCommand)
	if len(names) == 0 {
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "the tool takes no command"}
	}
	v, _ := c.Value()
	_, isObject := v.(map[string]any)
	for _, n := range names {
		if _, ok := c.Str(n); !ok && (c.Has(n) || !isObject) {
			return gate.Verdict{Decision: gate.Deny, Gate: Name,
				Reason: fmt.Sprintf("the command argument %q is not a string", n),
				Hint:   fmt.Sprintf("The argument %q must be a string holding a shell command line.", n)}
		}
	}
	if err := ctx.Err(); err != nil {
		return gate.Verdict{Decision: gate.Deny, Gate: Name, Reason: "the check was cancelled: " + err.Error(),
			Hint: "The command could not be checked, so it was refused."}
	}
	ans := g.z.Call(c)
	var all []Finding
	var parseErr error
	for _, an := range ans {
		if len(ans) == 1 {
			all = an.Findings // the usual one command argument: no copy
		} else {
			all = append(all, an.Findings...)
		}
		if an.Err != nil && parseErr == nil {
			parseErr = an.Err
		}
	}
	return verdict(all, parseErr)
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
