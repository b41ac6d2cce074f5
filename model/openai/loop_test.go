package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/calc"
)

var update = flag.Bool("update", false, "rewrite golden files")

const lookupSchema = `{"type":"object","properties":{"order":{"type":"string","maxLength":64}},"required":["order"],"additionalProperties":false}`

type lookupArgs struct {
	Order string `json:"order"`
}

// tools: calc works, lookup always fails, secret exists but is not allowed.
func testLoop(t *testing.T, m model.Model, limits budget.Limits, price func(model.Usage) float64) *agent.Loop {
	t.Helper()
	obj := json.RawMessage(lookupSchema)
	lookup := tool.New(tool.Spec{Name: "lookup", Description: "Look up an order.", Schema: obj, Effect: tool.ReadOnly},
		func(context.Context, lookupArgs) (string, error) {
			return "", errors.New("the order service is down; try again later")
		})
	secret := tool.New(tool.Spec{Name: "secret", Description: "Never offered.", Schema: obj, Effect: tool.Irreversible},
		func(context.Context, lookupArgs) (string, error) {
			t.Error("the secret tool ran")
			return "", nil
		})
	reg, err := tool.NewRegistry(calc.New(), lookup, secret)
	if err != nil {
		t.Fatal(err)
	}
	loop, err := agent.New(agent.Config{
		Model:  m,
		Tools:  reg,
		Gates:  gate.NewPipeline(approve.Deny{}, gate.NewAvailability([]string{"calc", "lookup"}), gate.Validation{}),
		Limits: limits,
		System: "You are a careful clerk.",
		Price:  price,
	})
	if err != nil {
		t.Fatal(err)
	}
	return loop
}

func newTestModel(t *testing.T, url string, o Options) *Model {
	t.Helper()
	o.BaseURL = url
	if o.Model == "" {
		o.Model = "gpt-4o-mini"
	}
	if o.APIKey == "" {
		o.APIKey = "sk-test-not-a-real-key"
	}
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A multi-turn tool-use conversation through agent.Loop: two calls in one
// answer (one works, one fails and goes back as an error result), then a call
// to a tool that is not offered (refused, an error result), then the answer.
// The requests are checked against the API's rules by the fake server and
// pinned in testdata/conversation.golden.
func TestConversationThroughLoop(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		answer("Adding up.", "tool_calls", [3]int64{120, 30, 0},
			call{"call_calc1", "calc", `{"expression":"2+3"}`},
			call{"call_look2", "lookup", `{"order":"A-17"}`}),
		answer("", "tool_calls", [3]int64{200, 20, 100}, call{"call_sec3", "secret", `{"order":"A-17"}`}),
		answer("The total is 5.", "stop", [3]int64{260, 10, 200}),
	)
	loop := testLoop(t, newTestModel(t, f.URL(), Options{}), budget.Defaults(), nil)
	res := loop.Run(t.Context(), "Add 2 and 3, and look up order A-17.")
	if res.Stop != agent.StopDone || res.Answer != "The total is 5." || res.Steps != 3 {
		t.Fatalf("stop %s steps %d answer %q err %v", res.Stop, res.Steps, res.Answer, res.Err)
	}
	schemas := map[string]json.RawMessage{"calc": calc.New().Spec().Schema, "lookup": json.RawMessage(lookupSchema)}
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		var names []string
		for _, tl := range r.req.Tools {
			names = append(names, tl.Function.Name)
		}
		slices.Sort(names)
		for _, tl := range r.req.Tools {
			if want := schemas[tl.Function.Name]; !jsonEqual(tl.Function.Parameters, want) {
				t.Errorf("request %d: %s parameters %s, want the tool's schema %s", i+1, tl.Function.Name, tl.Function.Parameters, want)
			}
		}
		if !slices.Equal(names, []string{"calc", "lookup"}) {
			t.Errorf("request %d offers %v, want only the allowed calc and lookup", i+1, names)
		}
		if r.req.Messages[0].Role != "system" || r.req.Messages[0].text() != "You are a careful clerk." {
			t.Errorf("request %d: first message %+v, want the system prompt", i+1, r.req.Messages[0])
		}
		if r.req.MaxTokens == nil || *r.req.MaxTokens != DefaultMaxTokens {
			t.Errorf("request %d: max_tokens %v", i+1, r.req.MaxTokens)
		}
	}
	results := toolMessages(reqs[2].req)
	want := map[string]string{
		"call_calc1": "5",
		"call_look2": "Error: the order service is down; try again later",
		"call_sec3":  "Error: Refused: ",
	}
	for id, prefix := range want {
		got, ok := results[id]
		if !ok || !strings.HasPrefix(got, prefix) {
			t.Errorf("result for %s = %q (sent %v), want prefix %q", id, got, ok, prefix)
		}
	}
	golden(t, "conversation.golden", reqs)
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// toolMessages maps tool_call_id to content of the tool messages.
func toolMessages(r wireReq) map[string]string {
	out := map[string]string{}
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.text()
		}
	}
	return out
}

// golden compares the request bodies, indented, with a golden file.
func golden(t *testing.T, name string, reqs []seen) {
	t.Helper()
	var got bytes.Buffer
	for i, r := range reqs {
		var b bytes.Buffer
		if err := json.Indent(&b, r.body, "", "  "); err != nil {
			t.Fatal(err)
		}
		got.WriteString("### request " + string(rune('1'+i)) + "\n")
		got.Write(b.Bytes())
		got.WriteString("\n")
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("requests differ from %s (run with -update to accept):\n%s", path, got.String())
	}
}

// The budget stop: the first answer already costs more than the cap, so the
// loop stops with StopBudget before its tool call runs, and makes no second call.
func TestBudgetStop(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		answer("", "tool_calls", [3]int64{10_000, 1_000, 0}, call{"call_1", "lookup", `{"order":"A-1"}`}),
		answer("never", "stop", [3]int64{1, 1, 0}),
	)
	limits := budget.Limits{MaxSteps: 10, MaxCostUSD: 0.01}
	loop := testLoop(t, newTestModel(t, f.URL(), Options{}), limits, costAt(2.5, 10, 0, 0))
	res := loop.Run(t.Context(), "look up A-1")
	if res.Stop != agent.StopBudget || !errors.Is(res.Err, budget.ErrExceeded) {
		t.Fatalf("stop %s err %v, want budget", res.Stop, res.Err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	// 10000*2.5/1e6 + 1000*10/1e6 = 0.025 + 0.01
	if res.CostUSD < 0.0349 || res.CostUSD > 0.0351 {
		t.Errorf("cost %v, want 0.035", res.CostUSD)
	}
}

// A server failing after all retries ends the run with StopError and a
// message that says what happened.
func TestLoopStopsOnAPIError(t *testing.T) {
	t.Parallel()
	f := newFake(t, errorReply(500, "server_error", "The server had an error while processing your request.", map[string]string{"retry-after-ms": "0"}))
	loop := testLoop(t, newTestModel(t, f.URL(), Options{}), budget.Defaults(), nil)
	res := loop.Run(t.Context(), "anything")
	if res.Stop != agent.StopError || !errors.Is(res.Err, ErrAPI) {
		t.Fatalf("stop %s err %v, want error wrapping ErrAPI", res.Stop, res.Err)
	}
	if n := len(f.requests()); n != 1+DefaultMaxRetries {
		t.Errorf("%d requests, want %d", n, 1+DefaultMaxRetries)
	}
	for _, s := range []string{"500", "after 2 retries", "The server had an error"} {
		if !strings.Contains(res.Err.Error(), s) {
			t.Errorf("error %q does not say %q", res.Err, s)
		}
	}
}
