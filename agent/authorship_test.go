package agent_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// authors is a Provenance that can tell the model's own words apart.
type authors struct{ recorder }

func (a *authors) Arguments(t tool.Tool, args json.RawMessage) {
	name := "?"
	if t != nil {
		name = t.Spec().Name
	}
	a.add("args " + name + ": " + string(args))
}

func (a *authors) Authored(source, text string) { a.add("authored " + source + ": " + text) }

// echo is a tool whose result repeats the model's own words.
type echo struct{ probe }

func (e *echo) Spec() tool.Spec { s := e.probe.Spec(); s.Echoes = true; return s }

// A live run and a resumed one tell an Authorship the same: each call's
// arguments before its result, an echoing tool's result as the model's
// own words, every other result as untrusted.
func TestAuthorship(t *testing.T) {
	t.Parallel()
	notes := &echo{probe{name: "notes", run: func(context.Context) (string, error) { return "my plan", nil }}}
	reader := &probe{name: "reader", run: func(context.Context) (string, error) { return "file text", nil }}
	reg, err := tool.NewRegistry(notes, reader)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"trusted: the task",
		`args notes: {"a":1}`, "authored notes: my plan",
		`args reader: {"b":2}`, "untrusted reader: file text",
	}
	gates := gate.NewPipeline(nil, gate.NewAvailability([]string{"notes", "reader"}))

	live := &authors{}
	l, err := agent.New(agent.Config{Tools: reg, Gates: gates, Provenance: live,
		Model: script(t, `{"turns":[{"text":"","calls":[{"tool":"notes","args":{"a":1}}]},{"text":"","calls":[{"tool":"reader","args":{"b":2}}]},{"text":"done"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res := l.Run(t.Context(), "the task"); res.Stop != agent.StopDone {
		t.Fatalf("stop %s: %v", res.Stop, res.Err)
	}
	if !slices.Equal(live.got, want) {
		t.Errorf("live run told\n%q\nwant\n%q", live.got, want)
	}

	resumed := &authors{}
	l, err = agent.New(agent.Config{Tools: reg, Gates: gates, Provenance: resumed, Model: script(t, `{"turns":[{"text":"done"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	st := agent.State{Messages: []model.Message{
		{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("the task")}},
		{Role: model.RoleAssistant, Blocks: []model.Block{model.CallBlock(model.ToolCall{ID: "c1", Name: "notes", Args: json.RawMessage(`{"a":1}`)})}},
		{Role: model.RoleUser, Blocks: []model.Block{model.ResultBlock(model.ToolResult{CallID: "c1", Name: "notes", Content: "my plan"})}},
		{Role: model.RoleAssistant, Blocks: []model.Block{model.CallBlock(model.ToolCall{ID: "c2", Name: "reader", Args: json.RawMessage(`{"b":2}`)})}},
	}, Settled: []model.ToolResult{{CallID: "c2", Name: "reader", Content: "file text"}}}
	if res := l.Resume(t.Context(), st); res.Stop != agent.StopDone {
		t.Fatalf("stop %s: %v", res.Stop, res.Err)
	}
	if !slices.Equal(resumed.got, want) {
		t.Errorf("resume told\n%q\nwant\n%q", resumed.got, want)
	}
}
