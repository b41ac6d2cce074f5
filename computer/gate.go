package computer

import (
	"context"
	"fmt"
	"net/url"

	"github.com/reinhq/rein/gate"
)

// GateScreen is the name of the screen policy's gate.
const GateScreen = "screen"

// Gate returns the screen policy as a gate of the pipeline: for an action
// of this screen it inspects the element the action would act on and
// asks for an irreversible one (a human must say yes; a no ends the task),
// denies typing into a password field unless the policy allows it, and,
// when the Env has an allowlist (Allower), denies a click on, or Enter on,
// a link to a URL off it. In a session that plans (Screen.Planned), an
// irreversible action is not asked about: it runs inside the plan in force
// and is refused outside it, and a plan call is the question. Calls of
// other tools pass. Put it after the
// validation gate, which checks the action against the screen first.
func (s *Screen) Gate() gate.Gate { return screenGate{s} }

type screenGate struct{ s *Screen }

var _ gate.Gate = screenGate{}

// Name returns "screen".
func (screenGate) Name() string { return GateScreen }

// Check judges an action on the element it would act on.
func (g screenGate) Check(ctx context.Context, c *gate.Call) gate.Verdict {
	if t, ok := c.Tool.(*planTool); ok && t.s == g.s {
		return g.s.proposal(c)
	}
	t, ok := c.Tool.(*actionTool)
	if !ok || t.s != g.s {
		return gate.Verdict{Decision: gate.Allow, Gate: GateScreen}
	}
	// Each call is judged on the page as it is now: what an earlier call
	// inspected (refused, say, so no screenshot came after it) may have
	// changed since. The inspections made here are kept for the rest of
	// this call's gates (confirm reads the call's effect), so the verdict
	// and the effect class agree.
	g.s.forget()
	a, err := t.decode(c.Args)
	if err != nil { // the validation gate says what is wrong
		return gate.Verdict{Decision: gate.Deny, Gate: GateScreen, Reason: "the action cannot be judged: " + err.Error(),
			Hint: "The action's arguments were not accepted: " + err.Error()}
	}
	if v := g.s.offsite(ctx, a); v != nil {
		return *v
	}
	v := g.s.judge(ctx, a)
	if v.Decision == gate.Ask && g.s.planning() {
		return g.s.byPlan(ctx, c, a, v)
	}
	return v
}

// Ran counts an action the plan allowed against the plan (gate.Counter).
func (g screenGate) Ran(c *gate.Call) { g.s.ran(c.ID) }

var _ gate.Counter = screenGate{}

// offsite refuses a click on a link, or Enter on a focused one, whose
// http(s) URL the Env's allowlist would block. It is the allowlist's
// guard, not the action policy's: it holds with Policy.Off.
func (s *Screen) offsite(ctx context.Context, a Action) *gate.Verdict {
	al, ok := s.env.(Allower)
	if !ok || !(a.Kind == Click || a.Kind == Key && a.Name == "Enter") {
		return nil
	}
	el := s.inspect(ctx, a)
	u, err := url.Parse(el.Href)
	if el.Href == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || al.AllowsURL(el.Href) {
		return nil
	}
	return &gate.Verdict{Decision: gate.Deny, Gate: GateScreen,
		Reason: fmt.Sprintf("%s on %s: the link goes to %s, which is not on the allowlist", a.String(), el.Label(), u.Host),
		Hint:   fmt.Sprintf("That link goes to %s, a site that is off limits for this task, so it was not followed. Do not try to reach it another way.", u.Host)}
}
