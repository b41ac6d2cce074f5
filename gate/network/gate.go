// Package network is the network gate: it refuses calls whose URL
// arguments (tool.RoleURL) point at internal or local addresses, judged by
// netguard.Check before any I/O. The fetch itself goes through netguard's
// client, which checks every address again when it dials.
package network

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/tool"
)

// Name is the gate's name in verdicts and the audit log.
const Name = "network"

// Hint is what the model is told when the gate refuses a URL. It says what
// is refused in general terms and never names the allow-list.
const Hint = "This address is not reachable from here: internal and local network addresses and non-web schemes are refused. Use a public http(s) URL."

// Gate refuses calls whose URL arguments (tool.RoleURL) fail netguard.Check. It
// does no I/O: names are resolved, and checked again, when the client dials.
type Gate struct {
	p *netguard.Policy
}

var _ gate.Gate = (*Gate)(nil)

// NewGate returns the network gate for a policy; nil allows nothing internal.
func NewGate(p *netguard.Policy) *Gate { return &Gate{p: p} }

// Name returns "network".
func (*Gate) Name() string { return Name }

// Check judges every argument the tool marks as a URL (c.URLs), as the tool
// receives it. A call to an unknown tool, or whose URL argument is present
// but not a string, is refused.
func (g *Gate) Check(_ context.Context, c *gate.Call) gate.Verdict {
	if c.Tool == nil {
		return gate.Verdict{Decision: gate.Deny, Gate: Name,
			Reason: fmt.Sprintf("no tool named %q exists, so its URL arguments cannot be found", c.Name),
			Hint:   fmt.Sprintf("There is no tool named %q. Use only the tools you were given.", c.Name)}
	}
	var buf [4]string
	names := c.ArgsWith(buf[:0], tool.RoleURL)
	if len(names) == 0 {
		return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "no URL arguments"}
	}
	if v, _ := c.Value(); !isObject(v) {
		return gate.Verdict{Decision: gate.Deny, Gate: Name,
			Reason: "the arguments are not a JSON object, so the URL cannot be checked",
			Hint:   "The arguments must be a JSON object with the URL as a string. Fix them and call the tool again."}
	}
	for _, u := range c.URLs() {
		name, raw := u.Name, u.Value
		if !u.String {
			return gate.Verdict{Decision: gate.Deny, Gate: Name,
				Reason: fmt.Sprintf("argument %q is not a string, so it cannot be checked as a URL", name),
				Hint:   fmt.Sprintf("The argument %q must be a URL written as a string. Fix it and call the tool again.", name)}
		}
		if err := netguard.Check(raw, g.p); err != nil {
			return gate.Verdict{Decision: gate.Deny, Gate: Name,
				Reason: fmt.Sprintf("argument %q, URL %q: %v", name, clip(raw, 200), err),
				Hint:   Hint}
		}
	}
	return gate.Verdict{Decision: gate.Allow, Gate: Name, Reason: "every URL passes the network policy"}
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// clip shortens s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
