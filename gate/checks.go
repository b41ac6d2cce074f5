package gate

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/reinhq/rein/tool"
)

// Names of the gates in this file.
const (
	NameExistence = "existence"
	NameLimit     = "limit"
)

// Existence refuses a call that names a resource which does not exist (an
// unknown order id), before the tool runs. It asks the tool, through
// tool.Exister; tools without a lookup pass. A lookup that fails in another
// way refuses too: what cannot be checked does not run. The lookup is of
// Call.Decoded, the value the tool runs with; arguments that do not decode
// are refused, whether or not a validation gate ran before.
type Existence struct{}

var _ Gate = Existence{}

// Name returns "existence".
func (Existence) Name() string { return NameExistence }

// Check runs the tool's lookup.
func (Existence) Check(ctx context.Context, c *Call) Verdict {
	ex, ok := c.Tool.(tool.Exister)
	if !ok {
		return Verdict{Decision: Allow, Gate: NameExistence}
	}
	// The lookup is of the value the tool will run with, decoded once
	// (by the validation gate, or here when the pipeline has none).
	decoded, err := c.Decoded()
	switch ce, checked := ex.(tool.CheckedExister); {
	case err != nil:
		return Verdict{Decision: Deny, Gate: NameExistence, Reason: fmt.Sprintf("the arguments of %s cannot be looked up: %v", c.Name, err),
			Hint: fmt.Sprintf("The arguments were not accepted: %v. Fix them and call the tool again.", err)}
	case checked && decoded != nil:
		err = ce.ExistsChecked(ctx, c.Args, decoded)
	default:
		err = ex.Exists(ctx, c.Args)
	}
	switch {
	case err == nil:
		return Verdict{Decision: Allow, Gate: NameExistence}
	case errors.Is(err, tool.ErrNotExist):
		return Verdict{Decision: Deny, Gate: NameExistence, Reason: err.Error(),
			Hint: fmt.Sprintf("%v — verify it, do not retry the same value.", err)}
	}
	return Verdict{Decision: Deny, Gate: NameExistence,
		Reason: fmt.Sprintf("the lookup of %s failed: %v", c.Name, err),
		Hint:   fmt.Sprintf("What this call names could not be checked (%v), so it did not run. Check the arguments and try again.", err)}
}

// Limit caps how many side-effecting calls of each tool may run in one
// session. A call counts once its tool actually ran (Pipeline.Ran), whatever
// the tool returned; refused calls do not count. The class is the call's
// (Call.Effect: a click on a Pay button is irreversible, one on a link is
// not). Irreversible calls of a tool without a cap of its own are capped at
// DefaultIrreversible; reversible calls are uncapped unless configured;
// read-only calls are never capped.
type Limit struct {
	caps         map[string]int
	irreversible int

	mu  sync.Mutex
	ran map[string]int
}

var (
	_ Gate    = (*Limit)(nil)
	_ Counter = (*Limit)(nil)
)

// DefaultIrreversible is the per-run cap of an irreversible tool.
const DefaultIrreversible = 1

// NewLimit returns the gate for per-tool caps; a cap of 0 or less means
// uncapped for a reversible tool and DefaultIrreversible for an irreversible one.
func NewLimit(caps map[string]int) *Limit {
	l := &Limit{caps: make(map[string]int, len(caps)), irreversible: DefaultIrreversible, ran: map[string]int{}}
	for k, v := range caps {
		if v > 0 {
			l.caps[k] = v
		}
	}
	return l
}

// Name returns "limit".
func (*Limit) Name() string { return NameLimit }

func (l *Limit) cap(ctx context.Context, c *Call) (int, bool) {
	if c.Tool == nil {
		return 0, false
	}
	switch c.Effect(ctx) {
	case tool.ReadOnly:
		return 0, false
	case tool.Irreversible:
		if n, ok := l.caps[c.Name]; ok {
			return n, true
		}
		return l.irreversible, true
	}
	n, ok := l.caps[c.Name]
	return n, ok
}

// Check denies a call whose tool has used up its cap.
func (l *Limit) Check(ctx context.Context, c *Call) Verdict {
	n, capped := l.cap(ctx, c)
	if !capped {
		return Verdict{Decision: Allow, Gate: NameLimit}
	}
	l.mu.Lock()
	ran := l.ran[c.Name]
	l.mu.Unlock()
	if ran >= n {
		return Verdict{Decision: Deny, Gate: NameLimit,
			Reason: fmt.Sprintf("%s already ran %d time(s); the per-run limit is %d", c.Name, ran, n),
			Hint:   fmt.Sprintf("The limit of %s calls for this task is used up, so this one did not run. Do not try again; finish and tell the user what is left to do.", c.Name)}
	}
	return Verdict{Decision: Allow, Gate: NameLimit}
}

// Ran counts a call that ran, by the class Check saw (Call.Effect keeps it).
func (l *Limit) Ran(c *Call) {
	if _, capped := l.cap(context.Background(), c); !capped {
		return
	}
	l.mu.Lock()
	l.ran[c.Name]++
	l.mu.Unlock()
}
