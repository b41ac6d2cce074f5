package model_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"reflect"
	"slices"
	"testing"

	"github.com/reinhq/rein/model"
)

func opaque(data string) model.Block {
	return model.Block{Kind: model.KindOpaque, Opaque: &model.Opaque{Provider: "anthropic", Type: "thinking", Data: json.RawMessage(data)}}
}

func user(blocks ...model.Block) model.Message {
	return model.Message{Role: model.RoleUser, Blocks: blocks}
}

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	calc := model.ToolDef{Name: "calc", Description: "Do sums", Schema: json.RawMessage(`{"type":"object"}`)}         // 4+7+17 = 28
	call := model.CallBlock(model.ToolCall{ID: "call_1_1", Name: "read_file", Args: json.RawMessage(`{"path":"a"}`)}) // 9+12 = 21
	result := model.ResultBlock(model.ToolResult{CallID: "call_1_1", Name: "read_file", Content: "hello world!"})     // 12
	tests := []struct {
		name string
		req  model.Request
		want int64
	}{
		{"empty", model.Request{}, 0},
		{"system 1 char", model.Request{System: "a"}, 1},
		{"system 4 chars", model.Request{System: "abcd"}, 1},
		{"system 5 chars rounds up", model.Request{System: "abcde"}, 2},
		{"system 8 chars", model.Request{System: "abcdefgh"}, 2},
		{"runes, not bytes", model.Request{System: "éééé"}, 1}, // 8 bytes
		{"wide runes", model.Request{System: "漢字漢字漢字漢字"}, 2},   // 24 bytes
		{"emoji", model.Request{System: "😀😀😀😀😀"}, 2},           // 20 bytes
		{"tool name, description and schema", model.Request{Tools: []model.ToolDef{calc}}, 7},
		{"two tools", model.Request{Tools: []model.ToolDef{calc, calc}}, 14},
		{"text block", model.Request{Messages: []model.Message{user(model.TextBlock("漢字漢字漢"))}}, 2},
		{"tool call name and args", model.Request{Messages: []model.Message{{Role: model.RoleAssistant, Blocks: []model.Block{call}}}}, 6},
		{"tool result content only", model.Request{Messages: []model.Message{user(result)}}, 3},
		{"opaque data only", model.Request{Messages: []model.Message{user(opaque(`"sig"`))}}, 2},
		{"nil payloads count nothing", model.Request{Messages: []model.Message{user(
			model.Block{Kind: model.KindToolCall}, model.Block{Kind: model.KindToolResult}, model.Block{Kind: model.KindOpaque})}}, 0},
		{"text of a non-text block is not counted", model.Request{Messages: []model.Message{user(
			model.Block{Kind: model.KindToolResult, Text: "ignored", Result: &model.ToolResult{Content: "abcd"}})}}, 1},
		{"unknown kind counts nothing", model.Request{Messages: []model.Message{user(model.Block{Kind: "image", Text: "abcdefgh"})}}, 0},
		{"everything", model.Request{
			System: "ab", // 2
			Tools:  []model.ToolDef{calc},
			Messages: []model.Message{
				user(model.TextBlock("漢字漢字漢")),                                            // 5
				{Role: model.RoleAssistant, Blocks: []model.Block{call, opaque(`"sig"`)}}, // 21 + 5
				user(result),
			},
		}, 19}, // 2+28+5+21+5+12 = 73 characters
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := model.EstimateTokens(&tt.req); got != tt.want {
				t.Errorf("EstimateTokens = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestEstimateGrows(t *testing.T) {
	t.Parallel()
	req := &model.Request{System: "sys"}
	prev := model.EstimateTokens(req)
	for i := range 10 {
		req.Messages = append(req.Messages, user(model.TextBlock("a message of some length")))
		got := model.EstimateTokens(req)
		if got <= prev {
			t.Fatalf("after message %d the estimate is %d, was %d: it must grow", i+1, got, prev)
		}
		prev = got
	}
}

func TestEstimateOutputTokens(t *testing.T) {
	t.Parallel()
	call := model.CallBlock(model.ToolCall{ID: "x", Name: "calc", Args: json.RawMessage(`{"expression":"1+1"}`)}) // 4+20
	tests := []struct {
		name   string
		blocks []model.Block
		want   int64
	}{
		{"none", nil, 0},
		{"text", []model.Block{model.TextBlock("abcde")}, 2},
		{"text and call", []model.Block{model.TextBlock("abcd"), call}, 7}, // 28 characters
		{"runes", []model.Block{model.TextBlock("ééé")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := model.EstimateOutputTokens(tt.blocks); got != tt.want {
				t.Errorf("EstimateOutputTokens = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestResponseTextAndCalls(t *testing.T) {
	t.Parallel()
	c1 := model.ToolCall{ID: "1", Name: "a", Args: json.RawMessage(`{}`)}
	c2 := model.ToolCall{ID: "2", Name: "b", Args: json.RawMessage(`{"x":1}`)}
	tests := []struct {
		name  string
		resp  model.Response
		text  string
		calls []string // IDs
	}{
		{"empty", model.Response{}, "", nil},
		{"text only", model.Response{Blocks: []model.Block{model.TextBlock("hi")}}, "hi", nil},
		{"mixed", model.Response{Blocks: []model.Block{
			model.TextBlock("one "),
			model.CallBlock(c1),
			opaque(`"x"`),
			model.TextBlock("two"),
			model.ResultBlock(model.ToolResult{CallID: "1", Content: "not text"}),
			{Kind: model.KindToolCall}, // no call: skipped
			model.CallBlock(c2),
			{Kind: model.KindOpaque, Text: "not text either"},
		}}, "one two", []string{"1", "2"}},
		{"calls in order", model.Response{Blocks: []model.Block{model.CallBlock(c2), model.CallBlock(c1)}}, "", []string{"2", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.resp.Text(); got != tt.text {
				t.Errorf("Text() = %q, want %q", got, tt.text)
			}
			if got := model.JoinText(tt.resp.Blocks); got != tt.text {
				t.Errorf("JoinText = %q, want %q", got, tt.text)
			}
			var ids []string
			for _, c := range tt.resp.Calls() {
				ids = append(ids, c.ID)
			}
			if !slices.Equal(ids, tt.calls) {
				t.Errorf("Calls() IDs = %q, want %q", ids, tt.calls)
			}
		})
	}
}

func TestBlockConstructors(t *testing.T) {
	t.Parallel()
	c := model.ToolCall{ID: "1", Name: "a", Args: json.RawMessage(`{}`)}
	b := model.CallBlock(c)
	c.Name = "changed"
	if b.Kind != model.KindToolCall || b.Call == nil || b.Call.Name != "a" {
		t.Errorf("CallBlock = %+v, want a copy of the call", b)
	}
	r := model.ToolResult{CallID: "1", Content: "x", IsError: true}
	rb := model.ResultBlock(r)
	r.Content = "changed"
	if rb.Kind != model.KindToolResult || rb.Result == nil || rb.Result.Content != "x" || !rb.Result.IsError {
		t.Errorf("ResultBlock = %+v, want a copy of the result", rb)
	}
	if tb := model.TextBlock("t"); tb.Kind != model.KindText || tb.Text != "t" || tb.Call != nil || tb.Result != nil || tb.Opaque != nil {
		t.Errorf("TextBlock = %+v", tb)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	a := model.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}
	b := model.Usage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40}
	tests := []struct {
		name  string
		u, v  model.Usage
		sum   model.Usage
		total int64
	}{
		{"zero", model.Usage{}, model.Usage{}, model.Usage{}, 0},
		{"add zero", a, model.Usage{}, a, 10},
		{"all fields", a, b, model.Usage{Input: 11, Output: 22, CacheRead: 33, CacheWrite: 44}, 110},
		{"input and output only", model.Usage{Input: 5}, model.Usage{Output: 7}, model.Usage{Input: 5, Output: 7}, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sum := tt.u.Add(tt.v)
			if sum != tt.sum {
				t.Errorf("%+v.Add(%+v) = %+v, want %+v", tt.u, tt.v, sum, tt.sum)
			}
			if got := tt.v.Add(tt.u); got != sum {
				t.Errorf("Add is not commutative: %+v vs %+v", got, sum)
			}
			if got := sum.Total(); got != tt.total {
				t.Errorf("%+v.Total() = %d, want %d", sum, got, tt.total)
			}
		})
	}
	if a.Total() != 10 || b.Total() != 100 {
		t.Errorf("Total counts every field: %d, %d", a.Total(), b.Total())
	}
}

func TestSourceRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		res  model.ToolResult
		json string
	}{
		{model.ToolResult{CallID: "c", Name: "read_file", Content: "x"}, `{"call_id":"c","name":"read_file","content":"x"}`},
		{model.ToolResult{CallID: "c", Name: "webfetch", Content: "x", Source: model.Source{Kind: model.SourceWebPage, Location: "https://example.com/a"}},
			`{"call_id":"c","name":"webfetch","content":"x","source":{"kind":"web_page","location":"https://example.com/a"}}`},
	} {
		b, err := json.Marshal(c.res)
		if err != nil || string(b) != c.json {
			t.Errorf("marshal %+v = %s, %v; want %s", c.res, b, err, c.json)
		}
		var back model.ToolResult
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c.res) {
			t.Errorf("unmarshal %s = %+v, %v", b, back, err)
		}
	}
	for _, bad := range []string{`{"source":{"kind":"web"}}`, `{"source":{"kind":"Local"}}`, `{"source":{"kind":""}}`} {
		var r model.ToolResult
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("%s read as %+v", bad, r)
		}
	}
	if _, err := model.SourceKind(9).MarshalText(); err == nil {
		t.Error("an unknown source kind was written")
	}
}

// An image counts width×height/750 tokens, in a block or a tool result;
// one whose size cannot be read counts as a megapixel.
func TestEstimateImages(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 1500, 500))); err != nil {
		t.Fatal(err)
	}
	img := model.Image{MediaType: "image/png", Data: buf.Bytes()}
	if got := model.ImageTokens(img); got != 1000 {
		t.Errorf("ImageTokens = %d, want 1000", got)
	}
	if got := model.ImageTokens(model.Image{MediaType: "image/png", Data: []byte("junk")}); got != 1333 {
		t.Errorf("ImageTokens(junk) = %d, want 1333", got)
	}
	req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Blocks: []model.Block{
		model.ImageBlock(img),
		model.ResultBlock(model.ToolResult{CallID: "c", Images: []model.Image{img}}),
	}}}}
	if got := model.EstimateTokens(req); got != 2000 {
		t.Errorf("EstimateTokens = %d, want 2000", got)
	}
}
