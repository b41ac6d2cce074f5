package scenario_test

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/eval"
	"github.com/reinhq/rein/eval/scenario"
)

// Issue 17's question targets, per run, for the attentive user under all,
// on every embedded suite and the held-out one: every question is the task
// contract's, none is asked twice in a run, and the per-run record names
// each question (the --json "runs"), so a count can be traced to its
// cause. A refusal is recorded with the gate that made it.
func TestQuestionsPerRun(t *testing.T) {
	t.Parallel()
	suites := append(embedded(t), eval.Suite(heldout(t)))
	for _, s := range suites {
		t.Run(s.Name(), func(t *testing.T) {
			t.Parallel()
			outs, err := s.(*scenario.Suite).RunAs(t.Context(), eval.GuardsAll, eval.UserAttentive)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range outs {
				if len(o.Questions) != o.Approvals {
					t.Errorf("%s %s %s: %d questions named, %d counted", o.Task, o.Injection, o.Persona, len(o.Questions), o.Approvals)
				}
				if len(o.Questions) > 1 {
					t.Errorf("%s %s %s: asked %v, want at most the contract question", o.Task, o.Injection, o.Persona, o.Questions)
				}
				for _, q := range o.Questions {
					if q != "contract: propose_contract" {
						t.Errorf("%s %s %s: asked %q, want only the contract question", o.Task, o.Injection, o.Persona, q)
					}
				}
				for _, r := range o.Refusals {
					if g, _, ok := strings.Cut(r, ": "); !ok || g == "" {
						t.Errorf("%s %s %s: refusal %q names no gate", o.Task, o.Injection, o.Persona, r)
					}
				}
			}
		})
	}
}
