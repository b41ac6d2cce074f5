package eval

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Guards names a guard configuration: which of rein's gates stand between
// the model and the tools in an evaluation run (docs/EVAL.md defines each).
type Guards string

// The guard configurations, from none to all.
const (
	// GuardsNone offers every tool of the suite and checks only that a
	// call parses (the validation gate).
	GuardsNone Guards = "none"
	// GuardsAllowlist offers only the tools the task needs.
	GuardsAllowlist Guards = "allowlist"
	// GuardsApproval asks the attentive user about every irreversible call.
	GuardsApproval Guards = "approval"
	// GuardsFlow is the data-flow gate alone, denying on a hit.
	GuardsFlow Guards = "flow"
	// GuardsAll is the allowlist, rein's default gates, the data-flow gate
	// asking on a hit, and the attentive user.
	GuardsAll Guards = "all"
)

// AllGuards returns every guard configuration, from none to all.
func AllGuards() []Guards {
	return []Guards{GuardsNone, GuardsAllowlist, GuardsApproval, GuardsFlow, GuardsAll}
}

// ParseGuards reads a guard configuration's name.
func ParseGuards(s string) (Guards, error) {
	g := Guards(s)
	if slices.Contains(AllGuards(), g) {
		return g, nil
	}
	names := make([]string, 0, 5)
	for _, a := range AllGuards() {
		names = append(names, string(a))
	}
	return "", fmt.Errorf("unknown guard configuration %q: use one of %s", s, strings.Join(names, ", "))
}

// The personas every suite may use. A suite may define others; these names
// carry meaning in Summarize.
const (
	PersonaOracle         = "oracle"          // the reference calls only, then the answer
	PersonaObedient       = "obedient"        // carries out an injection, then finishes the task
	PersonaInjectionFirst = "injection-first" // carries out an injection, then stops
	PersonaSloppy         = "sloppy"          // bad arguments and a repeated call first
	PersonaRecovering     = "recovering"      // after a refusal or error, a compliant alternative
)

// Outcome is one run of one task variant under one guard configuration.
type Outcome struct {
	Suite string `json:"suite"`
	Task  string `json:"task"`
	// Injection is the injection task's id; "" for the no-attack variant.
	Injection string `json:"injection,omitempty"`
	// Persona is the scripted model that ran: oracle, obedient,
	// injection-first, sloppy, recovering, ...
	Persona string `json:"persona"`
	// Success: the end-state utility check passed.
	Success bool `json:"success"`
	// AttackSucceeded: the injection's security check is true (attacked
	// variants only).
	AttackSucceeded bool `json:"attack_succeeded"`
	// Harm: an irreversible, out-of-policy action actually executed (one
	// that matches no reference call of the user task).
	Harm bool `json:"harm"`
	// FalseBlock: a gate refused a call the task needed (a reference call).
	FalseBlock bool `json:"false_block"`
	// Approvals is how many times a human was asked.
	Approvals int `json:"approvals"`
	// Questions names each question asked, in order: "gate: tool".
	Questions []string `json:"questions,omitempty"`
	// Refusals names each refused call, in order: "gate: tool: reason".
	Refusals []string `json:"refusals,omitempty"`
	// Steps is the model steps taken; RefSteps the reference's.
	Steps    int `json:"steps"`
	RefSteps int `json:"ref_steps"`
	// Trouble: a refusal, error or no-effect happened. Recovered: there
	// was trouble and the task still succeeded.
	Trouble   bool    `json:"trouble"`
	Recovered bool    `json:"recovered"`
	Tokens    int64   `json:"tokens"`
	CostUSD   float64 `json:"cost_usd"`
}

// Attacked reports whether the outcome is of an attacked variant.
func (o Outcome) Attacked() bool { return o.Injection != "" }

// pursuesTask reports whether the persona tries to finish the user's task.
// injection-first gives the task up by design, so it counts for attack
// success and harm, not for utility under attack.
func (o Outcome) pursuesTask() bool { return o.Persona != PersonaInjectionFirst }

// Suite is a set of tasks with known answers. Run runs all its tasks, every
// variant and persona it defines, under one guard configuration, and
// returns one Outcome per run. An error means the suite could not run (a
// broken scenario, a server that would not start), not that a task failed.
type Suite interface {
	Name() string
	Run(ctx context.Context, g Guards) ([]Outcome, error)
}

// Applier is a Suite that has nothing to measure under some guard
// configurations: RunAll does not run it there, and the reports show
// "n/a" for it (the computer suite has no data-flow gate, so "flow"
// would only repeat "all" under another name).
type Applier interface {
	Applies(g Guards) bool
}

// applies reports whether s is to run under g.
func applies(s Suite, g Guards) bool {
	a, ok := s.(Applier)
	return !ok || a.Applies(g)
}

// SelfChecker is a Suite that can show its checks are not vacuous: every
// user task is solved by its reference calls, every injection succeeds when
// nothing guards, and neither check is true when nothing is done.
// SelfCheck returns a one-line summary of what it proved.
type SelfChecker interface {
	SelfCheck(ctx context.Context) (string, error)
}
