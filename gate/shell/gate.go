package shell

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

// Name is the gate's name in verdicts and the audit log.
const Name = "shell"

// Gate judges every command-role argument of a call with Analyze.
type Gate struct {
	pr      prepared
	parsers sync.Pool // *syntax.Parser; a parser is reused, never shared
}

var _ gate.Gate = (*Gate)(nil)

// NewGate returns the shell gate for commands run in o.WorkDir.
func NewGate(o Options) *Gate {
	g := &Gate{pr: prepare(o)}
	g.parsers.New = func() any { return newParser() }
	return g
}

// Name returns "shell".
func (g *Gate) Name() string { return Name }

// Analyze judges one command line with a pooled parser.
func (g *Gate) Analyze(src string) Analysis { return g.analyzeIn(src, "", true) }

// analyzeIn judges a command line run in dir, relative to the work dir;
// commands says whether to list its simple commands.
func (g *Gate) analyzeIn(src, dir string, commands bool) Analysis {
	p := g.parsers.Get().(*syntax.Parser)
	defer g.parsers.Put(p)
	return analyzeWith(src, &g.pr, p, dir, commands)
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
	dir := ""
	var dbuf [4]string
	for _, n := range c.ArgsWith(dbuf[:0], tool.RoleDir) {
		if d, ok := c.Str(n); ok && d != "" {
			dir = d
			break
		}
	}
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
		an := g.analyzeIn(src, dir, false)
		if all == nil {
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
	// "rule: reason [command]; ...", sized first: one allocation.
	n := 0
	for _, f := range fs {
		if f.Decision == d {
			n += len(f.Rule) + len(f.Reason) + len(f.Command) + 7
		}
	}
	var reason strings.Builder
	reason.Grow(n)
	for _, f := range fs {
		if f.Decision != d {
			continue
		}
		if reason.Len() > 0 {
			reason.WriteString("; ")
		}
		reason.WriteString(f.Rule)
		reason.WriteString(": ")
		reason.WriteString(f.Reason)
		if f.Command != "" {
			reason.WriteString(" [")
			reason.WriteString(f.Command)
			reason.WriteString("]")
		}
	}
	return gate.Verdict{Decision: d, Gate: Name, Reason: reason.String(), Hint: hint(fs, d, err)}
}

// hint tells the model, in general terms, why the command was refused.
func hint(fs []Finding, d gate.Decision, err error) string {
	var whyBuf [16]string // more than there are reasons
	whys := whyBuf[:0]
	add := func(s string) {
		if !contains(whys, s) {
			whys = append(whys, s)
		}
	}
	parse := false
	for _, f := range fs {
		if f.Decision != d {
			continue
		}
		switch f.Rule {
		case "net-tool", "dev-tcp", "interpreter-socket", "dns-lookup", "publish", "net-api":
			add("it could send data off the machine")
		case "priv-esc":
			add("it could escalate privileges")
		case "disk-destroy", "system-destroy", "fork-bomb", "secure-delete":
			add("it could destroy data or disrupt the system")
		case "history-wipe":
			add("it could erase the shell history")
		case "credential-read":
			add("it could read stored credentials")
		case "write-outside", "symlink-outside", "git-config-global":
			add("it writes outside the working directory")
		case "write-unknown":
			add("it writes to a place that is only known when it runs")
		case "dynamic-command", "interpreter-code", "interpreter-stdin", "env-inject", "git-hooks":
			add("it runs code that cannot be checked before it runs")
		case "recursive-delete", "git-force-push", "git-push-delete", "git-reset-hard", "git-clean", "git-discard",
			"git-branch-delete", "git-rewrite":
			add("it deletes or overwrites work that may not be recoverable")
		case "package-install", "persistence", "system-change":
			add("it installs software or changes the system")
		case "parse-error":
			parse = true
			if err == nil {
				add("a command string inside it is not valid shell syntax")
			}
		default:
			add("it is too large, too complex or too unusual to check")
		}
	}
	verb := "was refused"
	if d == gate.Ask {
		verb = "needs a human's approval"
	}
	const tail = ". Use a different approach that stays inside the working directory and does not need this; do not try to get around the check."
	var b strings.Builder
	n := len(tail) + 80
	for _, w := range whys {
		n += len(w) + 6
	}
	b.Grow(n)
	if parse && err != nil {
		head := fmt.Sprintf("This command %s because it is not valid shell syntax: %v. Fix the syntax and try again.", verb, err)
		if len(whys) == 0 {
			return head
		}
		b.WriteString(head)
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
	b.WriteString(tail)
	return b.String()
}
