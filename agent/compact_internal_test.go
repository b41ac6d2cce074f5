package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/model"
)

// conversation builds task + n rounds of (assistant call, user result).
func conversation(n int) []model.Message {
	msgs := []model.Message{{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("the task")}}}
	for i := range n {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			model.Message{Role: model.RoleAssistant, Blocks: []model.Block{model.TextBlock("reading"),
				model.CallBlock(model.ToolCall{ID: id, Name: "read_file", Args: json.RawMessage(`{"path":"big.txt"}`)})}},
			model.Message{Role: model.RoleUser, Blocks: []model.Block{model.ResultBlock(model.ToolResult{CallID: id, Name: "read_file", Content: strings.Repeat("x", 4000)})}})
	}
	return msgs
}

func TestCompact(t *testing.T) {
	t.Parallel()
	msgs := conversation(10)
	req := &model.Request{Messages: msgs}
	est := model.EstimateTokens(req)
	// Under 80%: untouched.
	if _, ok := compact(msgs, est, est*2); ok {
		t.Fatal("compacted a request well under its budget")
	}
	out, ok := compact(msgs, est, est)
	if !ok {
		t.Fatal("did not compact a request at 100% of its budget")
	}
	if out[0].Blocks[0].Text != "the task" || len(out) > KeepMessages+2 {
		t.Fatalf("%d messages, first %+v", len(out), out[0])
	}
	summary := out[0].Blocks[len(out[0].Blocks)-1].Text
	for _, want := range []string{"context compacted", "messages (", "characters", "read_file ×", "digest ", "re-read any file you need"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q: %s", want, summary)
		}
	}
	// No call is separated from its result: the tail starts with the assistant.
	if out[1].Role != model.RoleAssistant {
		t.Fatalf("the kept tail starts with %s", out[1].Role)
	}
	calls := map[string]bool{}
	for _, m := range out {
		for _, b := range m.Blocks {
			if b.Kind == model.KindToolCall {
				calls[b.Call.ID] = true
			}
			if b.Kind == model.KindToolResult && !calls[b.Result.CallID] {
				t.Fatalf("result %s kept without its call", b.Result.CallID)
			}
		}
	}
	// Deterministic: the same conversation, the same summary.
	again, _ := compact(conversation(10), est, est)
	if again[0].Blocks[1].Text != summary {
		t.Fatal("the summary is not deterministic")
	}
	if model.EstimateTokens(&model.Request{Messages: out})*10 > est*8 {
		t.Errorf("compaction did not bring the request under 80%%")
	}
}

func TestCapResult(t *testing.T) {
	t.Parallel()
	if got := capResult("short", 10); got != "short" {
		t.Fatal(got)
	}
	s := strings.Repeat("é", 100) // 200 bytes
	got := capResult(s, 51)
	if !strings.HasPrefix(got, strings.Repeat("é", 25)+"\n[cut: the result has 200 bytes and only the first 50 are shown") {
		t.Fatalf("%q", got[:80])
	}
}
