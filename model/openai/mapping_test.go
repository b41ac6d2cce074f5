package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/reinhq/rein/model"
)

// Error results carry "Error: " (Chat Completions has no is_error), once.
func TestErrorResultPrefix(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		content string
		isErr   bool
		want    string
	}{
		{"5", false, "5"},
		{"the service is down", true, "Error: the service is down"},
		{"Error: already marked", true, "Error: already marked"},
		{"Refused: not allowed", true, "Error: Refused: not allowed"},
		{"", true, "Error: "},
	} {
		msgs, err := toMessages(&model.Message{Role: model.RoleUser, Blocks: []model.Block{
			model.ResultBlock(model.ToolResult{CallID: "c1", Content: tt.content, IsError: tt.isErr})}})
		if err != nil || len(msgs) != 1 || msgs[0].OfTool == nil {
			t.Fatalf("%q: %v %+v", tt.content, err, msgs)
		}
		if got := msgs[0].OfTool.Content.OfString.Value; got != tt.want || msgs[0].OfTool.ToolCallID != "c1" {
			t.Errorf("%q: sent %q, want %q", tt.content, got, tt.want)
		}
	}
}

// A user message with results and text: the tool messages come first, so
// they follow the assistant's tool_calls directly.
func TestResultsBeforeText(t *testing.T) {
	t.Parallel()
	msgs, err := toMessages(&model.Message{Role: model.RoleUser, Blocks: []model.Block{
		model.TextBlock("also this"),
		model.ResultBlock(model.ToolResult{CallID: "a", Content: "1"}),
		model.ResultBlock(model.ToolResult{CallID: "b", Content: "2"}),
	}})
	if err != nil || len(msgs) != 3 || msgs[0].OfTool == nil || msgs[1].OfTool == nil || msgs[2].OfUser == nil {
		t.Fatalf("%v %+v", err, msgs)
	}
	if _, err := toMessages(&model.Message{Role: "system"}); err == nil {
		t.Error("an unknown role was accepted")
	}
}

// A tool whose schema is not a JSON object is refused before any request.
func TestBadToolSchema(t *testing.T) {
	t.Parallel()
	m, err := New(Options{Model: "m", BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`[]`, `"x"`, `{`, `null`} {
		req := userReq("hi")
		req.Tools = []model.ToolDef{{Name: "t", Schema: json.RawMessage(s)}}
		if _, err := m.Generate(t.Context(), req); err == nil {
			t.Errorf("schema %s accepted", s)
		}
	}
}

func benchRequest(turns int) *model.Request {
	req := &model.Request{System: "You are a careful clerk.", Tools: []model.ToolDef{
		{Name: "calc", Description: "calc", Schema: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string","maxLength":4096}},"required":["expression"],"additionalProperties":false}`)},
	}}
	req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("Add the numbers.")}})
	for i := range turns {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			model.Message{Role: model.RoleAssistant, Blocks: []model.Block{model.TextBlock("Adding."),
				model.CallBlock(model.ToolCall{ID: id, Name: "calc", Args: json.RawMessage(`{"expression":"1+2"}`)})}},
			model.Message{Role: model.RoleUser, Blocks: []model.Block{model.ResultBlock(model.ToolResult{CallID: id, Name: "calc", Content: "3"})}})
	}
	return req
}

// BenchmarkGenerate is one call of a 10-turn conversation through the SDK to
// an in-process server (no socket): mapping, encoding, decoding.
func BenchmarkGenerate(b *testing.B) {
	body := []byte(answer("", "tool_calls", [3]int64{900, 20, 512}, call{"call_x", "calc", `{"expression":"2+2"}`}).body)
	m, err := New(Options{Model: "m", BaseURL: "http://bench.invalid/v1", APIKey: "k",
		HTTPClient: &http.Client{Transport: canned{200, body}}})
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest(10)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Generate(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParams is the request mapping alone, for the same conversation.
func BenchmarkParams(b *testing.B) {
	m, err := New(Options{Model: "m", BaseURL: "http://bench.invalid/v1"})
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest(10)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.params(req); err != nil {
			b.Fatal(err)
		}
	}
}

// Images: a tool message carries text only, so a result's screenshot goes
// as an image_url part (a data: URL) of the user message after it, and the
// tool message says so; an image block joins the same user message.
func TestImagesAsUserImageParts(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG fake")
	msgs, err := toMessages(&model.Message{Role: model.RoleUser, Blocks: []model.Block{
		model.ResultBlock(model.ToolResult{CallID: "a", Content: "the screen changed", Images: []model.Image{{MediaType: "image/png", Data: png}}}),
		model.TextBlock("look"),
	}})
	if err != nil || len(msgs) != 2 || msgs[0].OfTool == nil || msgs[1].OfUser == nil {
		t.Fatalf("%v %+v", err, msgs)
	}
	if got := msgs[0].OfTool.Content.OfString.Value; got != "the screen changed\n[1 image(s) of this result follow in the next user message]" {
		t.Errorf("tool message %q", got)
	}
	b, err := json.Marshal(msgs[1])
	if err != nil {
		t.Fatal(err)
	}
	var user struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		} `json:"content"`
	}
	if err := json.Unmarshal(b, &user); err != nil {
		t.Fatal(err)
	}
	want := "data:image/png;base64,iVBORyBmYWtl"
	if len(user.Content) != 2 || user.Content[0].Text != "look" || user.Content[1].Type != "image_url" || user.Content[1].ImageURL.URL != want {
		t.Errorf("user message %s", b)
	}
	// Without images the user message stays a plain string.
	msgs, _ = toMessages(&model.Message{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("hi")}})
	if len(msgs) != 1 || msgs[0].OfUser == nil || msgs[0].OfUser.Content.OfString.Value != "hi" {
		t.Errorf("text-only message %+v", msgs)
	}
}
