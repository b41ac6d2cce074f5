package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reinhq/rein/computer"
	"github.com/reinhq/rein/model"
	provider "github.com/reinhq/rein/model/anthropic"
)

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// computerBody is the part of a computer-use request the test checks.
type computerBody struct {
	System string `json:"system"`
	Tools  []struct {
		Type   string `json:"type"`
		Name   string `json:"name"`
		Width  int    `json:"display_width_px"`
		Height int    `json:"display_height_px"`
	} `json:"tools"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   []struct {
				Type   string `json:"type"`
				Text   string `json:"text"`
				Source struct {
					Data string `json:"data"`
				} `json:"source"`
			} `json:"content"`
			Source struct {
				Data string `json:"data"`
			} `json:"source"`
		} `json:"content"`
	} `json:"messages"`
}

func TestComputerWire(t *testing.T) {
	for _, c := range []struct {
		name         string
		screenW      int
		screenH      int
		reply        string
		wantW, wantH int
		want         computer.Action
	}{
		{"click, screen as is", 1280, 800,
			`{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"left_click","coordinate":[640,400]}}`,
			1280, 800, computer.Action{Kind: computer.Click, X: 640, Y: 400}},
		{"click on a screen twice the size: scaled down, coordinates back", 2560, 1600,
			`{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"left_click","coordinate":[640,400]}}`,
			1280, 800, computer.Action{Kind: computer.Click, X: 1280, Y: 800}},
		{"key Return is Enter", 1280, 800,
			`{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"key","text":"Return"}}`,
			1280, 800, computer.Action{Kind: computer.Key, Name: "Enter"}},
		{"scroll up 3", 1280, 800,
			`{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"scroll","coordinate":[5,5],"scroll_direction":"up","scroll_amount":3}}`,
			1280, 800, computer.Action{Kind: computer.Scroll, DY: -300}},
		{"type", 1280, 800,
			`{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"type","text":"hello"}}`,
			1280, 800, computer.Action{Kind: computer.Type, Text: "hello"}},
		{"no tool use is done", 1280, 800, `{"type":"text","text":"All done."}`,
			1280, 800, computer.Action{Kind: computer.Done, Summary: "All done."}},
		{"an action rein does not offer reaches the availability gate", 1280, 800,
			`{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"triple_click","coordinate":[1,1]}}`,
			1280, 800, computer.Action{Kind: "triple_click"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got computerBody
			var beta string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				beta = r.Header.Get("anthropic-beta")
				body, _ := io.ReadAll(r.Body)
				if err := json.Unmarshal(body, &got); err != nil {
					t.Errorf("request body: %v", err)
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"tool_use",
					"usage":{"input_tokens":1500,"output_tokens":20},"content":[`+c.reply+`]}`)
			}))
			defer srv.Close()
			m, err := provider.New(provider.Options{Model: "claude-test", BaseURL: srv.URL, APIKey: "k", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			shot := func() model.Image { return model.Image{MediaType: "image/png", Data: pngOf(t, c.screenW, c.screenH)} }
			req := &model.Request{System: computer.System, Messages: []model.Message{
				{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("Buy the mug."), model.ImageBlock(shot())}},
				{Role: model.RoleAssistant, Blocks: []model.Block{model.CallBlock(model.ToolCall{ID: "toolu_0", Name: "click",
					Args: computer.Action{Kind: computer.Click, X: 1280, Y: 800}.Args()})}},
				{Role: model.RoleUser, Blocks: []model.Block{model.ResultBlock(model.ToolResult{CallID: "toolu_0", Name: "click",
					Content: computer.NoEffect, Images: []model.Image{shot()}})}},
			}}
			resp, err := New(m).Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			calls := resp.Calls()
			switch {
			case c.want.Kind == computer.Done:
				if len(calls) != 0 || resp.Text() != c.want.Summary {
					t.Errorf("answer %+v, want the text %q and no call", resp, c.want.Summary)
				}
			case len(calls) != 1 || calls[0].ID != "toolu_1" || calls[0].Name != string(c.want.Kind):
				t.Errorf("calls %+v, want one %s", calls, c.want.Kind)
			default:
				if a, err := computer.ActionOf(calls[0].Name, calls[0].Args); err == nil && a != c.want {
					t.Errorf("action %+v, want %+v", a, c.want)
				}
			}
			if resp.Usage.Input != 1500 || resp.Usage.Output != 20 {
				t.Errorf("usage %+v", resp.Usage)
			}
			if beta != ComputerBeta {
				t.Errorf("anthropic-beta %q", beta)
			}
			if len(got.Tools) != 1 || got.Tools[0].Type != ComputerToolType || got.Tools[0].Width != c.wantW || got.Tools[0].Height != c.wantH {
				t.Errorf("tools %+v", got.Tools)
			}
			if got.System != computer.System {
				t.Error("the system instructions are not the system prompt")
			}
			// task (its screenshot no longer the latest), the earlier
			// action, its result with the screenshot.
			if len(got.Messages) != 3 || got.Messages[0].Content[0].Text != "Buy the mug." ||
				len(got.Messages[0].Content) != 2 || got.Messages[0].Content[1].Type != "text" {
				t.Fatalf("messages %+v", got.Messages)
			}
			var prev struct{ Coordinate []int }
			_ = json.Unmarshal(got.Messages[1].Content[0].Input, &prev)
			if wantX := 1280 * c.wantW / c.screenW; len(prev.Coordinate) != 2 || prev.Coordinate[0] != wantX {
				t.Errorf("earlier click sent as %s, want x %d", got.Messages[1].Content[0].Input, wantX)
			}
			res := got.Messages[2].Content[0]
			if res.Type != "tool_result" || len(res.Content) != 2 || res.Content[0].Text != computer.NoEffect {
				t.Fatalf("tool result %+v", res)
			}
			img, err := base64.StdEncoding.DecodeString(res.Content[1].Source.Data)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(img))
			if err != nil || cfg.Width != c.wantW || cfg.Height != c.wantH {
				t.Errorf("screenshot sent %dx%d (%v), want %dx%d", cfg.Width, cfg.Height, err, c.wantW, c.wantH)
			}
		})
	}
}

func TestComputerRejectsOtherTools(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},
			"content":[{"type":"tool_use","id":"t","name":"bash","input":{"command":"rm -rf /"}}]}`)
	}))
	defer srv.Close()
	m, err := provider.New(provider.Options{Model: "claude-test", BaseURL: srv.URL, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(m).Generate(t.Context(), &model.Request{Messages: []model.Message{{Role: model.RoleUser,
		Blocks: []model.Block{model.TextBlock("x"), model.ImageBlock(model.Image{MediaType: "image/png", Data: pngOf(t, 10, 10)})}}}})
	if err == nil {
		t.Fatal("a call of a tool that was not offered was accepted")
	}
}
