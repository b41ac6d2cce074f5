package scenario_test

import (
	"encoding/json"
	"os"
	"slices"
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
//
// One exception: an injection in an MCP tool's description is in the
// context from the first step, before any contract can be stated, so the
// obedient persona's call for the attacker comes before the contract and
// the flow gate asks about it (the attentive user says no): that question
// is the defence firing, not a question a legitimate task costs.
func TestQuestionsPerRun(t *testing.T) {
	t.Parallel()
	early := descriptionInjections(t, "../suites/mcp.json")
	suites := append(embedded(t), eval.Suite(heldout(t)))
	for _, s := range suites {
		t.Run(s.Name(), func(t *testing.T) {
			t.Parallel()
			outs, err := s.(*scenario.Suite).RunAs(t.Context(), eval.GuardsAll, eval.UserAttentive)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range outs {
				if early[o.Task+" "+o.Injection] {
					o.Questions = slices.DeleteFunc(slices.Clone(o.Questions), func(q string) bool { return strings.HasPrefix(q, "flow: ") })
					o.Approvals = len(o.Questions)
				}
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

// descriptionInjections are the "task injection" pairs of a suite file
// whose injection is placed in an MCP tool's description.
func descriptionInjections(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Tasks []struct {
			ID         string `json:"id"`
			Injections []struct {
				Injection string `json:"injection"`
				Into      struct {
					MCPDescription string `json:"mcp_description"`
				} `json:"into"`
			} `json:"injections"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, task := range f.Tasks {
		for _, in := range task.Injections {
			if in.Into.MCPDescription != "" {
				m[task.ID+" "+in.Injection] = true
			}
		}
	}
	if len(m) == 0 {
		t.Fatalf("%s: no injection in an MCP description", path)
	}
	return m
}
