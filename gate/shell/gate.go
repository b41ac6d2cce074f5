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
	o       Options
	parsers sync.Pool // *syntax.Parser; a parser is reused, never shared
}

var _ gate.Gate = (*Gate)(nil)

// NewGate returns the shell gate for commands run in o.WorkDir.
func NewGate(o Options) *Gate {
	g := &Gate{o: o}
	g.parsers.New = func() any { return newParser() }
	return g
}

// Name returns "shell".
func (g *Gate) Name() string { return Name }

// Analyze judges one command line with a pooled parser.
func (g *Gate) Analyze(src string) Analysis { return g.analyzeIn(src, "") }

// analyzeIn judges a command line run in dir, relative to the work dir.
func (g *Gate) analyzeIn(src, dir string) Analysis {
	p := g.parsers.Get().(*syntax.Parser)
	defer g.parsers.Put(p)
	return analyzeWith(src, g.o, p, dir)
}

// Check judges the call's command arguments. A call whose tool has no
// command argument is allowed; a command argument that is present but not
// a string is refused. When the tool also takes a directory argument (role
// dir), commands are judged as run there.
func (g *Gate) Check(ctx context.Context, c *gate.Call) gate.Verdict {
	if c.Tool == nil {
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "no tool, so no command to check"}
	}
	names := c.Tool.Spec().ArgsWith(tool.RoleCommand)
	if len(names) == 0 {
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "the tool takes no command"}
	}
	v, _ := c.Value()
	_, isObject := v.(map[string]any)
	dir := ""
	for _, n := range c.Tool.Spec().ArgsWith(tool.RoleDir) {
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
		an := g.analyzeIn(src, dir)
		all = append(all, an.Findings...)
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
	var reason strings.Builder
	for _, f := range fs {
		if f.Decision != d {
			continue
		}
		if reason.Len() > 0 {
			reason.WriteString("; ")
		}
		fmt.Fprintf(&reason, "%s: %s", f.Rule, f.Reason)
		if f.Command != "" {
			fmt.Fprintf(&reason, " [%s]", f.Command)
		}
	}
	return gate.Verdict{Decision: d, Gate: Name, Reason: reason.String(), Hint: hint(fs, d, err)}
}

// hint tells the model, in general terms, why the command was refused.
func hint(fs []Finding, d gate.Decision, err error) string {
	var whys []string
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
	var b strings.Builder
	if parse && err != nil {
		fmt.Fprintf(&b, "This command %s because it is not valid shell syntax: %v. Fix the syntax and try again.", verb, err)
		if len(whys) == 0 {
			return b.String()
		}
		b.WriteString(" Also, ")
	} else {
		fmt.Fprintf(&b, "This command %s because ", verb)
	}
	b.WriteString(strings.Join(whys, ", and "))
	b.WriteString(". Use a different approach that stays inside the working directory and does not need this; do not try to get around the check.")
	return b.String()
}
