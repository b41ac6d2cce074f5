package anthropic

import (
	"fmt"
	"testing"

	"github.com/reinhq/rein/model"
)

// benchConversation is a 20-turn tool-use conversation with thinking blocks.
func benchConversation() *model.Request {
	req := ask("Sum the orders.")
	req.System = "You are careful."
	req.Tools = []model.ToolDef{{Name: "calc", Description: "Arithmetic.", Schema: []byte(`{"type":"object","properties":{"expression":{"type":"string"}},"additionalProperties":false}`)}}
	for i := range 20 {
		id := fmt.Sprintf("toolu_%02d", i)
		req.Messages = append(req.Messages,
			model.Message{Role: model.RoleAssistant, Blocks: []model.Block{
				{Kind: model.KindOpaque, Opaque: &model.Opaque{Provider: ProviderName, Type: "thinking", Data: []byte(thinkingBlock)}},
				model.TextBlock("Adding."),
				model.CallBlock(model.ToolCall{ID: id, Name: "calc", Args: []byte(`{"expression":"3*45 + 2*120"}`)}),
			}},
			model.Message{Role: model.RoleUser, Blocks: []model.Block{model.ResultBlock(model.ToolResult{CallID: id, Content: "375"})}})
	}
	return req
}

func BenchmarkBuildRequest(b *testing.B) {
	m, err := New(Options{Model: "m", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		b.Fatal(err)
	}
	req := benchConversation()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := m.buildRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerate is one call through the SDK with an in-memory transport:
// request encoding, the SDK's machinery, response decoding and mapping.
func BenchmarkGenerate(b *testing.B) {
	body := []byte(message("tool_use", 100, 50, 2000, 10, thinkingBlock, text("Adding."),
		toolUse("toolu_99", "calc", `{"expression":"1+1"}`)))
	m := transportModel(b, 200, body)
	req := benchConversation()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Generate(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
