package computer

import (
	"context"

	"github.com/reinhq/rein/gate"
)

// GateScreen is the name of the screen policy's gate.
const GateScreen = "screen"

// Gate returns the screen policy as a gate of the pipeline: for an action
// of this screen it inspects the element the action would act on and
// asks for an irreversible one (a human must say yes; a no ends the task)
// and denies typing into a password field unless the policy allows it.
// Calls of other tools pass. Put it after the validation gate, which
// checks the action against the screen first.
func (s *Screen) Gate() gate.Gate { return screenGate{s} }

type screenGate struct{ s *Screen }

var _ gate.Gate = screenGate{}

// Name returns "screen".
func (screenGate) Name() string { return GateScreen }

// Check judges an action on the element it would act on.
func (g screenGate) Check(ctx context.Context, c *gate.Call) gate.Verdict {
	t, ok := c.Tool.(*actionTool)
	if !ok || t.s != g.s {
		return gate.Verdict{Decision: gate.Allow, Gate: GateScreen}
	}
	a, err := t.decode(c.Args)
	if err != nil { // the validation gate says what is wrong
		return gate.Verdict{Decision: gate.Deny, Gate: GateScreen, Reason: "the action cannot be judged: " + err.Error(),
			Hint: "The action's arguments were not accepted: " + err.Error()}
	}
	return g.s.judge(ctx, a)
}
