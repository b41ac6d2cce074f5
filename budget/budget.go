// Package budget counts what a run has used against its limits: model steps,
// tool calls, tokens and cost. It is the loop's stop rule, and it does not
// depend on the model deciding to stop. Wall time is enforced by the loop
// through its context deadline, not here.
//
// A Meter is not safe for concurrent use; it belongs to one loop.
package budget

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/reinhq/rein/model"
)

// Limits are the caps of one run. A zero field means no cap on that
// quantity; Defaults gives the caps `rein run` uses.
type Limits struct {
	MaxSteps     int           `json:"max_steps"`
	MaxToolCalls int           `json:"max_tool_calls"`
	MaxTokens    int64         `json:"max_tokens"`
	MaxCostUSD   float64       `json:"max_cost_usd"`
	MaxWall      time.Duration `json:"max_wall"`
}

// Defaults are the limits of `rein run`: 40 steps, 200 tool calls, 200,000
// tokens, 30 minutes. Cost is uncapped until a priced provider is used.
func Defaults() Limits {
	return Limits{MaxSteps: 40, MaxToolCalls: 200, MaxTokens: 200_000, MaxWall: 30 * time.Minute}
}

// MarshalJSON writes MaxWall as a duration string ("30m0s"), not nanoseconds.
func (l Limits) MarshalJSON() ([]byte, error) {
	type plain Limits
	return json.Marshal(struct {
		plain
		MaxWall string `json:"max_wall"`
	}{plain(l), l.MaxWall.String()})
}

// UnmarshalJSON reads what MarshalJSON writes: MaxWall as a duration
// string ("30m0s"), or as a number of nanoseconds (a time.Duration's own
// encoding). A field it does not know is an error, so a misspelt cap is
// never silently no cap.
func (l *Limits) UnmarshalJSON(b []byte) error {
	type plain Limits
	var v struct {
		plain
		MaxWall json.RawMessage `json:"max_wall"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	out := Limits(v.plain)
	switch raw := bytes.TrimSpace(v.MaxWall); {
	case len(raw) == 0 || string(raw) == "null":
		out.MaxWall = 0
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("limits: max_wall: %w", err)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("limits: max_wall %q is not a duration like \"90s\" or \"30m0s\": %w", s, err)
		}
		out.MaxWall = d
	default:
		var ns int64
		if err := json.Unmarshal(raw, &ns); err != nil {
			return fmt.Errorf("limits: max_wall must be a duration string like \"30m0s\" or a number of nanoseconds: %w", err)
		}
		out.MaxWall = time.Duration(ns)
	}
	*l = out
	return nil
}

// Validate rejects negative limits.
func (l Limits) Validate() error {
	switch {
	case l.MaxSteps < 0:
		return fmt.Errorf("max steps is %d: use 0 for no cap or a positive number", l.MaxSteps)
	case l.MaxToolCalls < 0:
		return fmt.Errorf("max tool calls is %d: use 0 for no cap or a positive number", l.MaxToolCalls)
	case l.MaxTokens < 0:
		return fmt.Errorf("max tokens is %d: use 0 for no cap or a positive number", l.MaxTokens)
	case l.MaxCostUSD < 0 || math.IsNaN(l.MaxCostUSD) || math.IsInf(l.MaxCostUSD, 0):
		return fmt.Errorf("max cost is %g USD: use 0 for no cap or a positive amount", l.MaxCostUSD)
	case l.MaxWall < 0:
		return fmt.Errorf("max wall time is %s: use 0 for no cap or a positive duration", l.MaxWall)
	}
	return nil
}

// Limit names a capped quantity.
type Limit string

// The quantities a Meter caps.
const (
	Steps     Limit = "steps"
	ToolCalls Limit = "tool_calls"
	Tokens    Limit = "tokens"
	Cost      Limit = "cost"
)

// ErrExceeded is matched by every *ExceededError.
var ErrExceeded = errors.New("budget exceeded")

// ExceededError says which cap was reached and by how much.
type ExceededError struct {
	Limit Limit
	Used  string
	Max   string
	// Scope is set for a cap shared beyond the run (a ledger's): "day"
	// for every session's together, or "tenant NAME"; empty for the
	// run's own caps.
	Scope string
	// Resets is when a shared cap's period ends and it allows calls
	// again (the next midnight UTC); zero for the run's own caps.
	Resets time.Time
}

func (e *ExceededError) Error() string {
	if e.Scope != "" {
		return fmt.Sprintf("%s %s cap reached: %s used of %s today (UTC); no model call is made until it resets at %s",
			e.Scope, e.Limit, e.Used, e.Max, e.Resets.UTC().Format(time.RFC3339))
	}
	switch e.Limit {
	case Steps:
		return fmt.Sprintf("step cap reached: %s of %s model calls made", e.Used, e.Max)
	case ToolCalls:
		return fmt.Sprintf("tool-call cap reached: %s of %s calls made", e.Used, e.Max)
	case Tokens:
		return fmt.Sprintf("token budget exceeded: %s tokens used of %s", e.Used, e.Max)
	}
	return fmt.Sprintf("%s budget exceeded: %s used of %s", e.Limit, e.Used, e.Max)
}

// Is makes errors.Is(err, ErrExceeded) true.
func (e *ExceededError) Is(target error) bool { return target == ErrExceeded }

// Charge is a model call as a budget shared beyond the run sees it (a
// ledger's, agent.Ledger): before the call, what it is expected to use
// (its input as counted); after, what it used.
type Charge struct {
	Session string  `json:"session"`
	Step    int     `json:"step,omitempty"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// Meter counts usage against Limits.
type Meter struct {
	limits Limits
	steps  int
	calls  int
	usage  model.Usage
	cost   float64
	// turnSteps and turnCalls are the steps and calls counted before the
	// current turn of a conversation began (BeginTurn): the step and
	// tool-call caps count from them, the token and cost caps from zero.
	turnSteps, turnCalls int
}

// NewMeter returns a meter with nothing used.
func NewMeter(l Limits) *Meter { return &Meter{limits: l} }

// BeginTurnFrom says that the turn in flight began when began had been
// used: a conversation resumed in the middle of a turn goes on counting
// that turn's steps and calls against their caps, as it did live.
func (m *Meter) BeginTurnFrom(began Used) {
	m.turnSteps, m.turnCalls = began.Steps, began.ToolCalls
}

// BeginStep counts a model call about to be made. It fails, counting
// nothing, when the step cap has been reached.
func (m *Meter) BeginStep() error {
	if m.limits.MaxSteps > 0 && m.steps-m.turnSteps >= m.limits.MaxSteps {
		return &ExceededError{Limit: Steps, Used: fmt.Sprint(m.steps - m.turnSteps), Max: fmt.Sprint(m.limits.MaxSteps)}
	}
	m.steps++
	return nil
}

// Charge adds a model call's usage and cost, then reports whether a token
// or cost cap is now exceeded. The loop calls it before any tool of the
// response runs: afterwards would be too late to stop.
func (m *Meter) Charge(u model.Usage, costUSD float64) error {
	m.usage = m.usage.Add(u)
	m.cost += costUSD
	if m.limits.MaxTokens > 0 && m.usage.Total() > m.limits.MaxTokens {
		return &ExceededError{Limit: Tokens, Used: fmt.Sprint(m.usage.Total()), Max: fmt.Sprint(m.limits.MaxTokens)}
	}
	if m.limits.MaxCostUSD > 0 && m.cost > m.limits.MaxCostUSD {
		return &ExceededError{Limit: Cost, Used: fmt.Sprintf("$%.4f", m.cost), Max: fmt.Sprintf("$%.4f", m.limits.MaxCostUSD)}
	}
	return nil
}

// TakeCall counts a tool call the model asked for. It fails, counting
// nothing, when the tool-call cap has been reached.
func (m *Meter) TakeCall() error {
	if m.limits.MaxToolCalls > 0 && m.calls-m.turnCalls >= m.limits.MaxToolCalls {
		return &ExceededError{Limit: ToolCalls, Used: fmt.Sprint(m.calls - m.turnCalls), Max: fmt.Sprint(m.limits.MaxToolCalls)}
	}
	m.calls++
	return nil
}

// Used is a snapshot of what a meter has counted.
type Used struct {
	Steps     int         `json:"steps"`
	ToolCalls int         `json:"tool_calls"`
	Usage     model.Usage `json:"usage"`
	Tokens    int64       `json:"tokens"`
	CostUSD   float64     `json:"cost_usd"`
}

// Used returns what has been counted so far.
func (m *Meter) Used() Used {
	return Used{Steps: m.steps, ToolCalls: m.calls, Usage: m.usage, Tokens: m.usage.Total(), CostUSD: m.cost}
}

// NewMeterFrom returns a meter that has already counted used: a resumed
// session goes on from what the interrupted one spent.
func NewMeterFrom(l Limits, used Used) *Meter {
	return &Meter{limits: l, steps: used.Steps, calls: used.ToolCalls, usage: used.Usage, cost: used.CostUSD}
}

// BeginTurn starts a new turn of a conversation: from here the step and
// tool-call caps count only this turn's steps and calls, while the token
// and cost caps go on counting the whole conversation. Used still reports
// the conversation's totals.
func (m *Meter) BeginTurn() {
	m.turnSteps, m.turnCalls = m.steps, m.calls
}

// Turn returns what the current turn has counted (all of it before any
// BeginTurn): its steps and tool calls.
func (m *Meter) Turn() (steps, calls int) {
	return m.steps - m.turnSteps, m.calls - m.turnCalls
}
