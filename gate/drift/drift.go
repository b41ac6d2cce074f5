// Package drift is the intent-drift gate: before a high-risk call runs (one
// that changes files, runs commands, sends, or reaches the network), it looks
// in the call's arguments for sensitive tokens — credential words, .env,
// .ssh, id_rsa, the cloud metadata address, network tools — and asks a human
// when one of them does not appear in the user's words (the goal and the
// user's later messages). A task about the web server's TLS key may name a
// private key; a task about a typo that suddenly reads ~/.ssh/id_rsa has
// drifted, often because something the agent read told it to.
//
// Only the user's words account for a token. What the model wrote itself
// (its scratchpad, its todo list, its earlier arguments) never does: a model
// steered by an injection writes "curl .env token" into its notes as easily
// as into a command.
//
// The gate asks even where the permission mode would allow the call
// (accept-edits): drift is a reason to stop and look, not a rule about
// tools. It never denies on its own and never allows what another gate
// refuses. It is a tripwire, not a wall: a token spelled differently from
// the list slips past it, which is why the scope, shell and network gates
// and the sandbox stand behind it.
package drift

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

// Name is the gate's name in verdicts.
const Name = "drift"

// Suspected starts the reason of every verdict of this gate: the audit log's
// mark of a suspected drift.
const Suspected = "intent_drift_suspected"

// token is one sensitive token: a pattern matched case-insensitively in the
// arguments, and the words that, found in the goal or notes, account for it.
type token struct {
	name  string
	re    *regexp.Regexp
	words []string // any one of them in the goal accounts for the token
}

// b matches a word with boundaries that treat _, -, . and / as separators.
func b(word string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|[^a-z0-9])` + word + `($|[^a-z0-9])`)
}

// tokens are the sensitive tokens, compiled at the gate's first judgement
// rather than at every start of the program.
var tokens = sync.OnceValue(func() []token {
	return []token{
		{"password", b(`(password|passwd)s?`), []string{"password", "passwd"}},
		{"secret", b(`secrets?`), []string{"secret"}},
		{"token", b(`tokens?`), []string{"token"}},
		{"credentials", b(`(credentials?|creds)`), []string{"credential", "creds"}},
		{"api key", regexp.MustCompile(`(?i)api[_-]?key`), []string{"api key", "api_key", "apikey", "api-key"}},
		{"private key", regexp.MustCompile(`(?i)private[_ -]?key|BEGIN [A-Z ]*PRIVATE`), []string{"private key"}},
		{".env", regexp.MustCompile(`(?i)(^|[^a-z0-9])\.env($|[^a-z0-9])`), []string{".env", "dotenv", "env file"}},
		{".ssh", regexp.MustCompile(`(?i)\.ssh($|[^a-z0-9])`), []string{".ssh", "ssh key", "ssh config"}},
		{"id_rsa", regexp.MustCompile(`(?i)id_(rsa|dsa|ecdsa|ed25519)`), []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "ssh key"}},
		{".aws", regexp.MustCompile(`(?i)\.aws($|[^a-z0-9])`), []string{".aws", "aws"}},
		{".netrc", regexp.MustCompile(`(?i)\.netrc`), []string{".netrc", "netrc"}},
		{".git-credentials", regexp.MustCompile(`(?i)\.git-credentials`), []string{"git-credentials", "git credentials"}},
		{".kube", regexp.MustCompile(`(?i)\.kube($|[^a-z0-9])`), []string{".kube", "kubeconfig", "kubernetes"}},
		{".gnupg", regexp.MustCompile(`(?i)\.gnupg`), []string{".gnupg", "gnupg", "gpg"}},
		{"metadata address", regexp.MustCompile(`169\.254\.169\.254|(?i)metadata\.google\.internal|\[?fd00:ec2::254`), []string{"169.254.169.254", "metadata"}},
		{"curl", b(`curl`), []string{"curl"}},
		{"wget", b(`wget`), []string{"wget"}},
		{"nc", b(`(nc|ncat|netcat|socat)`), []string{"netcat", "nc ", "ncat", "socat"}},
		{"ssh", b(`(ssh|scp|sftp)`), []string{"ssh", "scp", "sftp"}},
	}
})

// Gate is the intent-drift gate of one session.
type Gate struct {
	mu   sync.Mutex
	goal string
}

var _ gate.Gate = (*Gate)(nil)

// New returns the gate for a session whose user asked for goal.
func New(goal string) *Gate { return &Gate{goal: goal} }

// Name returns "drift".
func (*Gate) Name() string { return Name }

// highRisk reports whether c is a call the gate judges: one with an effect
// (files, commands, sending: the call's class, tool.Effector) or of a tool
// that reaches the network.
func highRisk(ctx context.Context, c *gate.Call) bool {
	if c.Tool == nil {
		return false
	}
	return c.Effect(ctx) != tool.ReadOnly || len(c.Tool.Spec().ArgsWith(tool.RoleURL)) > 0
}

// Check asks when a high-risk call's arguments hold a sensitive token the
// user's words do not account for, and allows everything else.
func (g *Gate) Check(ctx context.Context, c *gate.Call) gate.Verdict {
	if !highRisk(ctx, c) {
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "not a high-risk call"}
	}
	found := Drifted(argText(c), g.context())
	if len(found) == 0 {
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "no sensitive token the goal does not account for"}
	}
	return gate.Verdict{Decision: gate.Ask, Gate: Name,
		Reason: fmt.Sprintf("%s: the %s call names %s, which the user's words do not mention",
			Suspected, c.Name, strings.Join(found, ", ")),
		Hint: fmt.Sprintf("This %s call touches something sensitive that the user's task did not mention, so it needs the user's confirmation, "+
			"and it was not given. If the task truly needs it, explain why to the user instead of retrying.", c.Name)}
}

// argText is the text of a call's arguments as the tool will see it: every
// key and string value decoded (so a JSON escape such as \u0063url hides
// nothing), or the raw arguments when they are not JSON. A command line
// gives its words as the shell runs them (gate.Call.Commands: 'c'url and
// c\url are curl), or its text when it does not parse; a path argument
// gives its value as gate.Call.Paths reads it.
func argText(c *gate.Call) string {
	v, ok := c.Value()
	if !ok {
		return string(c.Args)
	}
	var b strings.Builder
	var done map[string]bool // top-level arguments written from a view
	if _, isObject := v.(map[string]any); isObject {
		cmds := c.Commands()
		paths := c.Paths()
		if len(cmds)+len(paths) > 0 {
			done = make(map[string]bool, len(cmds)+len(paths))
		}
		for i := range cmds {
			l := &cmds[i]
			done[l.Arg] = true
			if l.File == nil {
				b.WriteString(l.Src)
				b.WriteByte('\n')
				continue
			}
			for _, w := range l.Words() {
				b.WriteString(w.Text)
				b.WriteByte('\n')
			}
		}
		for _, p := range paths {
			if p.String {
				done[p.Name] = true
				b.WriteString(p.Value)
				b.WriteByte('\n')
			}
		}
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteByte('\n')
		case map[string]any:
			for k, x := range v {
				b.WriteString(k)
				b.WriteByte('\n')
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		default:
			fmt.Fprintf(&b, "%v\n", v)
		}
	}
	if m, isObject := v.(map[string]any); isObject {
		for k, x := range m {
			b.WriteString(k)
			b.WriteByte('\n')
			if !done[k] {
				walk(x)
			}
		}
	} else {
		walk(v)
	}
	return b.String()
}

func (g *Gate) context() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return strings.ToLower(g.goal)
}

// Drifted returns the names of the sensitive tokens in args that context
// (the user's words) does not account for, in list order.
func Drifted(args, context string) []string {
	context = strings.ToLower(context)
	var found []string
	for _, t := range tokens() {
		if !t.re.MatchString(args) {
			continue
		}
		accounted := false
		for _, w := range t.words {
			if strings.Contains(context, w) {
				accounted = true
				break
			}
		}
		if !accounted {
			found = append(found, t.name)
		}
	}
	return found
}

// AddGoal adds a later message of the user's to the goal (a conversation's
// next request accounts for what it names).
func (g *Gate) AddGoal(msg string) {
	g.mu.Lock()
	g.goal += "\n" + msg
	g.mu.Unlock()
}
