package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/reinhq/rein/model"
)

// TestOpaqueSpliceOnlyValidJSON: an opaque block is spliced into the body
// exactly as stored, so it is accepted only when those exact bytes are a JSON
// object. Characters bytes.TrimSpace strips but JSON does not allow (vertical
// tab, form feed, NEL, no-break space, ...) once passed the check and made the
// body invalid JSON; now they are refused, and JSON's own white space is still
// carried byte for byte.
func TestOpaqueSpliceOnlyValidJSON(t *testing.T) {
	t.Parallel()
	const obj = `{"type":"thinking","thinking":"x","signature":"s"}`
	m, err := New(Options{Model: "m", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data string
		ok   bool
	}{
		{"plain", obj, true},
		{"json white space kept", " \t\r\n" + obj + "\n \t", true},
		{"vertical tab before", "\v" + obj, false},
		{"vertical tab after", obj + "\v", false},
		{"form feed", "\f" + obj, false},
		{"NEL", "\u0085" + obj, false},
		{"no-break space", "\u00a0" + obj, false},
		{"ideographic space", obj + "\u3000", false},
		{"nul", "\x00" + obj, false},
		{"array", `[` + obj + `]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := ask("hello")
			req.Messages = append(req.Messages,
				model.Message{Role: model.RoleAssistant, Blocks: []model.Block{
					{Kind: model.KindOpaque, Opaque: &model.Opaque{Provider: ProviderName, Type: "thinking", Data: []byte(tc.data)}},
					model.TextBlock("ok"),
				}},
				model.Message{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("go on")}})
			_, body, err := m.buildRequest(req)
			if !tc.ok {
				if !errors.Is(err, ErrBadRequest) {
					t.Fatalf("err = %v, want ErrBadRequest (body %q)", err, body)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(body) {
				t.Fatalf("body is not JSON: %q", body)
			}
			if !bytes.Contains(body, []byte(tc.data)) {
				t.Fatalf("opaque data not carried byte for byte in %q", body)
			}
		})
	}
}

// TestToolArgsWithNonJSONSpace: tool arguments that are an object only after
// non-JSON trimming go to the API as {} (the gates saw the real text), never
// as an invalid body or an encoding failure.
func TestToolArgsWithNonJSONSpace(t *testing.T) {
	t.Parallel()
	m, err := New(Options{Model: "m", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	req := ask("hello")
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, Blocks: []model.Block{
			model.CallBlock(model.ToolCall{ID: "toolu_1", Name: "calc", Args: []byte("\v{\"a\":1}")}),
		}},
		model.Message{Role: model.RoleUser, Blocks: []model.Block{model.ResultBlock(model.ToolResult{CallID: "toolu_1", Content: "1"})}})
	_, body, err := m.buildRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(body) || !bytes.Contains(body, []byte(`"input":{}`)) {
		t.Fatalf("body = %s", body)
	}
}

// TestImages: an image block and the screenshot of a tool result go to the
// API as base64 image blocks, the result's image inside its tool_result
// beside the text.
func TestImages(t *testing.T) {
	t.Parallel()
	m, err := New(Options{Model: "m", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	img := model.Image{MediaType: "image/png", Data: []byte("\x89PNG fake")}
	req := ask("hello")
	req.Messages[0].Blocks = append(req.Messages[0].Blocks, model.ImageBlock(img))
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, Blocks: []model.Block{model.CallBlock(model.ToolCall{ID: "t1", Name: "click", Args: []byte(`{"x":1,"y":2}`)})}},
		model.Message{Role: model.RoleUser, Blocks: []model.Block{model.ResultBlock(model.ToolResult{CallID: "t1", Content: "the screen changed", Images: []model.Image{img}})}})
	_, body, err := m.buildRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	type source struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	}
	var got struct {
		Messages []struct {
			Content []struct {
				Type    string  `json:"type"`
				Source  *source `json:"source"`
				Content []struct {
					Type   string  `json:"type"`
					Text   string  `json:"text"`
					Source *source `json:"source"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil || len(got.Messages) != 3 {
		t.Fatalf("%v: %s", err, body)
	}
	want := source{Type: "base64", MediaType: "image/png", Data: "iVBORyBmYWtl"}
	first := got.Messages[0].Content
	if len(first) != 2 || first[1].Type != "image" || first[1].Source == nil || *first[1].Source != want {
		t.Errorf("image block sent as %s", body)
	}
	res := got.Messages[2].Content
	if len(res) != 1 || res[0].Type != "tool_result" || len(res[0].Content) != 2 ||
		res[0].Content[0].Text != "the screen changed" || res[0].Content[1].Type != "image" ||
		res[0].Content[1].Source == nil || *res[0].Content[1].Source != want {
		t.Errorf("tool result sent as %s", body)
	}
}
