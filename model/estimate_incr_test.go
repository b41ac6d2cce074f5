package model_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/reinhq/rein/model"
)

// TestEstimatorMatchesEstimateTokens drives an Estimator through what a
// session does to its conversation — appends, a compaction that rebuilds the
// first message and drops others, a message replaced by a new slice, tools
// and system text changed, a conversation cut short — and checks after each
// change that it says exactly what EstimateTokens says of the same request.
func TestEstimatorMatchesEstimateTokens(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		alphabet := []rune("abc é€😀 \n{}")
		b := make([]rune, rng.IntN(300))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	block := func() model.Block {
		switch rng.IntN(3) {
		case 0:
			return model.TextBlock(text())
		case 1:
			args, _ := json.Marshal(map[string]string{"x": text()})
			return model.CallBlock(model.ToolCall{ID: "c", Name: "tool", Args: args})
		default:
			return model.ResultBlock(model.ToolResult{CallID: "c", Content: text()})
		}
	}
	message := func() model.Message {
		m := model.Message{Role: model.RoleUser}
		for range rng.IntN(4) {
			m.Blocks = append(m.Blocks, block())
		}
		return m
	}
	tools := []model.ToolDef{{Name: "a", Description: "reads", Schema: json.RawMessage(`{"type":"object"}`)}}
	req := &model.Request{System: "you are rein", Tools: tools}
	var e model.Estimator
	check := func(what string) {
		t.Helper()
		if got, want := e.Estimate(req), model.EstimateTokens(req); got != want {
			t.Fatalf("after %s: Estimator says %d, EstimateTokens %d", what, got, want)
		}
	}
	check("nothing")
	for step := range 400 {
		switch op := rng.IntN(10); {
		case op < 6:
			req.Messages = append(req.Messages, message())
			check("an append")
		case op == 6 && len(req.Messages) > 3:
			// Compaction: a new first message, the middle dropped.
			first := model.Message{Role: model.RoleUser, Blocks: append([]model.Block{model.TextBlock("task")}, model.TextBlock(text()))}
			req.Messages = append([]model.Message{first}, req.Messages[len(req.Messages)-2:]...)
			check("a compaction")
		case op == 7 && len(req.Messages) > 0:
			i := rng.IntN(len(req.Messages))
			m := message()
			req.Messages = append(append(append([]model.Message(nil), req.Messages[:i]...), m), req.Messages[i+1:]...)
			check(fmt.Sprintf("message %d replaced", i))
		case op == 8:
			req.Tools = append(append([]model.ToolDef(nil), req.Tools...), model.ToolDef{Name: fmt.Sprint("t", step), Description: text()})
			req.System = text()
			check("new tools and system text")
		case op == 9 && len(req.Messages) > 1:
			req.Messages = req.Messages[:rng.IntN(len(req.Messages))]
			check("a cut")
		}
	}
}
