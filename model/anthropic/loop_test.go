package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/calc"
)

// A thinking block as the API might send it, with spacing, key order and
// characters (<, &, \u escapes) that a JSON encoder would change.
const thinkingBlock = `{"type":"thinking", "thinking":"Add <a> & <b>: 2+3 \u00e9","signature":"EqQBCkYIARgCIkB+sig/=="}`
const redactedBlock = `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}`

// newLoop builds a loop over calc and a second registered tool that the
// availability gate does not allow, so it must not be offered.
func newLoop(t *testing.T, m model.Model, limits budget.Limits, price func(model.Usage) float64) *agent.Loop {
	t.Helper()
	hidden := tool.New(tool.Spec{Name: "delete_everything", Description: "never offered",
		Schema: json.RawMessage(`{"type":"object","additionalProperties":false}`), Effect: tool.Irreversible},
		func(context.Context, struct{}) (string, error) {
			t.Error("delete_everything ran")
			return "", nil
		})
	tools, err := tool.NewRegistry(calc.New(), hidden)
	if err != nil {
		t.Fatal(err)
	}
	loop, err := agent.New(agent.Config{
		Model:  m,
		Tools:  tools,
		Gates:  gate.NewPipeline(approve.Deny{}, gate.NewAvailability([]string{"calc"}), gate.Validation{}),
		Limits: limits,
		System: "You add numbers.",
		Price:  price,
	})
	if err != nil {
		t.Fatal(err)
	}
	return loop
}

// The conversation: the model thinks, calls calc twice (one call is
// malformed and comes back as an error result), calls a tool it was not
// offered (refused, error result), then answers. The second request must
// carry the results tied by id, the thinking blocks byte for byte, and cache
// breakpoints on the system prompt, the last tool and the last block.
func TestLoopToolUseConversation(t *testing.T) {
	t.Parallel()
	turn1 := message("tool_use", 100, 50, 0, 80, thinkingBlock, redactedBlock, text("Adding."),
		toolUse("toolu_01", "calc", `{"expression":"2+3"}`),
		toolUse("toolu_02", "calc", `{"expression":"2+"}`),
		toolUse("toolu_03", "delete_everything", `{}`))
	f := newFake(t,
		reply{status: 200, body: turn1, check: func(t *testing.T, r *wireRequest) {
			if got := r.toolNames(); len(got) != 1 || got[0] != "calc" {
				t.Errorf("tools offered = %v, want only [calc]", got)
			}
			if len(r.System) != 1 || r.System[0].Text != "You add numbers." || !isEphemeral(r.System[0].CacheControl) {
				t.Errorf("system = %+v, want the prompt with cache_control", r.System)
			}
			if !isEphemeral(r.Tools[len(r.Tools)-1].CacheControl) {
				t.Error("no cache_control on the last tool")
			}
			if b := r.block(t, 0, 0); b.Text != "What is 2+3?" || !isEphemeral(b.CacheControl) {
				t.Errorf("task block = %+v, want the task with cache_control", b)
			}
		}},
		reply{status: 200, body: message("end_turn", 20, 10, 170, 60, text("The sum is 5.")), check: func(t *testing.T, r *wireRequest) {
			if len(r.Messages) != 3 {
				t.Fatalf("%d messages, want task, assistant, results", len(r.Messages))
			}
			asst := r.Messages[1].Content
			if len(asst) != 6 {
				t.Fatalf("assistant content has %d blocks, want 6", len(asst))
			}
			if !bytes.Equal(asst[0], []byte(thinkingBlock)) || !bytes.Equal(asst[1], []byte(redactedBlock)) {
				t.Errorf("thinking blocks changed:\n got %s\n got %s", asst[0], asst[1])
			}
			want := []struct {
				id      string
				isError bool
			}{{"toolu_01", false}, {"toolu_02", true}, {"toolu_03", true}}
			res := r.Messages[2].Content
			if len(res) != len(want) {
				t.Fatalf("%d results, want %d", len(res), len(want))
			}
			for i, w := range want {
				b := r.block(t, 2, i)
				if b.Type != "tool_result" || b.ToolUseID != w.id || b.IsError != w.isError {
					t.Errorf("result %d = %+v, want id %s is_error %v", i, b, w.id, w.isError)
				}
			}
			if b := r.block(t, 2, 0); !bytes.Contains(b.Content, []byte(`"5"`)) {
				t.Errorf("calc result content = %s, want 5", b.Content)
			}
			if b := r.block(t, 2, 2); !isEphemeral(b.CacheControl) {
				t.Error("no cache_control on the conversation's last block")
			}
			if b := r.block(t, 0, 0); len(b.CacheControl) != 0 {
				t.Error("the old breakpoint on the task is still there: too many breakpoints")
			}
		}},
	)
	m := newTestModel(t, f, Options{})
	res := newLoop(t, m, budget.Defaults(), costAt(3, 15, 0.3, 3.75)).
		Run(t.Context(), "What is 2+3?")
	if res.Stop != agent.StopDone || res.Answer != "The sum is 5." {
		t.Fatalf("stop %s answer %q err %v", res.Stop, res.Answer, res.Err)
	}
	wantUsage := model.Usage{Input: 120, Output: 60, CacheRead: 170, CacheWrite: 140}
	if res.Usage != wantUsage {
		t.Errorf("usage = %+v, want %+v", res.Usage, wantUsage)
	}
	wantCost := (120*3 + 60*15 + 170*0.3 + 140*3.75) / 1e6
	if d := res.CostUSD - wantCost; d > 1e-12 || d < -1e-12 {
		t.Errorf("cost = %g, want %g", res.CostUSD, wantCost)
	}
	if len(f.requests()) != 2 {
		t.Errorf("%d requests, want 2", len(f.requests()))
	}
}

// The budget stop: the first answer costs more than the cap, so the loop
// stops before the tool it asks for runs.
func TestLoopBudgetStop(t *testing.T) {
	t.Parallel()
	f := newFake(t, ok(message("tool_use", 400_000, 1000, 0, 0, toolUse("toolu_01", "calc", `{"expression":"1+1"}`))))
	m := newTestModel(t, f, Options{})
	limits := budget.Defaults()
	limits.MaxTokens = 0
	limits.MaxCostUSD = 0.50
	res := newLoop(t, m, limits, costAt(3, 15, 0.3, 3.75)).Run(t.Context(), "Add 1+1.")
	if res.Stop != agent.StopBudget {
		t.Fatalf("stop = %s (%v), want budget", res.Stop, res.Err)
	}
	if res.ToolCalls != 0 {
		t.Errorf("%d tool calls ran after the budget was spent", res.ToolCalls)
	}
	if res.CostUSD < 1.2 {
		t.Errorf("cost = %g, want 400k input and 1k output at sonnet prices (1.215)", res.CostUSD)
	}
}

// A failure after the retries ends the run with StopError and a clear cause.
func TestLoopModelErrorStops(t *testing.T) {
	t.Parallel()
	fail := reply{status: 503, header: map[string]string{"retry-after": "0"}, body: apiError("api_error", "down")}
	f := newFake(t, fail, fail, fail)
	res := newLoop(t, newTestModel(t, f, Options{}), budget.Defaults(), nil).Run(t.Context(), "Add.")
	var apiErr *APIError
	if res.Stop != agent.StopError || !errors.As(res.Err, &apiErr) || apiErr.StatusCode != 503 {
		t.Fatalf("stop %s err %v, want error with a 503 APIError", res.Stop, res.Err)
	}
}

func isEphemeral(raw json.RawMessage) bool {
	var cc struct{ Type string }
	return json.Unmarshal(raw, &cc) == nil && cc.Type == "ephemeral"
}
