package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/computer"
	provider "github.com/reinhq/rein/model/anthropic"
)

// screen is an Env of a fixed size that records the actions done on it.
type screen struct {
	t    *testing.T
	w, h int
	mu   sync.Mutex
	done []computer.Action
}

func (s *screen) Screenshot(context.Context) (computer.Screenshot, error) {
	return computer.Screenshot{PNG: pngOf(s.t, s.w, s.h), Width: s.w, Height: s.h}, nil
}
func (s *screen) Inspect(context.Context, computer.Action) (computer.Element, error) {
	return computer.Element{Found: true, Tag: "a", Texts: []string{"Read more"}}, nil
}
func (s *screen) Perform(_ context.Context, a computer.Action) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = append(s.done, a)
	return nil
}
func (s *screen) Blocked() []computer.BlockedRequest { return nil }

// TestInTheLoop runs a computer session with the Anthropic computer-use
// model against a fake server: the model's click (on the scaled image) is
// done at the screen's coordinates, its result goes back under the
// tool_use's id with the new screenshot, the first screenshot is not sent
// again, and the text answer ends the run.
func TestInTheLoop(t *testing.T) {
	var mu sync.Mutex
	var bodies []computerBody
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b computerBody
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Errorf("request body: %v", err)
		}
		mu.Lock()
		bodies = append(bodies, b)
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		content := `{"type":"text","text":"Clicking Read more."},{"type":"tool_use","id":"toolu_a","name":"computer","input":{"action":"left_click","coordinate":[640,400]}}`
		stop := "tool_use"
		if n > 1 {
			content, stop = `{"type":"text","text":"Read it."}`, "end_turn"
		}
		_, _ = io.WriteString(w, `{"id":"msg","type":"message","role":"assistant","model":"m","stop_reason":"`+stop+`",
			"usage":{"input_tokens":10,"output_tokens":5},"content":[`+content+`]}`)
	}))
	defer srv.Close()
	m, err := provider.New(provider.Options{Model: "claude-test", BaseURL: srv.URL, APIKey: "k", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	env := &screen{t: t, w: 2560, h: 1600}
	s, err := computer.New(computer.Config{Model: New(m), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	res := s.Run(t.Context(), "Read the article.")
	if res.Stop != agent.StopDone || res.Answer != "Read it." {
		t.Fatalf("stop %s %q (%v)", res.Stop, res.Answer, res.Err)
	}
	if len(env.done) != 1 || env.done[0] != (computer.Action{Kind: computer.Click, X: 1280, Y: 800}) {
		t.Errorf("done on the screen: %+v", env.done)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	second := bodies[1]
	if len(second.Messages) != 3 || second.Messages[0].Content[1].Type != "text" {
		t.Fatalf("second request %+v", second.Messages)
	}
	call, result := second.Messages[1].Content[1], second.Messages[2].Content[0]
	var in struct{ Coordinate []int }
	_ = json.Unmarshal(call.Input, &in)
	if call.Type != "tool_use" || len(in.Coordinate) != 2 || in.Coordinate[0] != 640 || in.Coordinate[1] != 400 {
		t.Errorf("the click sent back as %+v", call)
	}
	if result.Type != "tool_result" || result.ToolUseID != "toolu_a" || len(result.Content) != 2 ||
		result.Content[0].Text != computer.NoEffect || result.Content[1].Type != "image" {
		t.Errorf("the result sent as %+v", result)
	}
}

// TestPlannedInTheLoop: in a session that plans, the first request offers
// the plan tool alone and carries no screenshot; the model's plan call
// comes back as a call of rein's plan tool, its result brings the screen,
// and the next request offers the computer tool beside the plan tool and
// sends the plan call back under its own name.
func TestPlannedInTheLoop(t *testing.T) {
	var mu sync.Mutex
	var bodies []computerBody
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b computerBody
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Errorf("request body: %v", err)
		}
		mu.Lock()
		bodies = append(bodies, b)
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		content, stop := `{"type":"tool_use","id":"toolu_p","name":"plan","input":{"actions":[]}}`, "tool_use"
		if n == 2 {
			content = `{"type":"tool_use","id":"toolu_a","name":"computer","input":{"action":"left_click","coordinate":[640,400]}}`
		}
		if n > 2 {
			content, stop = `{"type":"text","text":"Read it."}`, "end_turn"
		}
		_, _ = io.WriteString(w, `{"id":"msg","type":"message","role":"assistant","model":"m","stop_reason":"`+stop+`",
			"usage":{"input_tokens":10,"output_tokens":5},"content":[`+content+`]}`)
	}))
	defer srv.Close()
	m, err := provider.New(provider.Options{Model: "claude-test", BaseURL: srv.URL, APIKey: "k", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	env := &screen{t: t, w: 2560, h: 1600}
	s, err := computer.New(computer.Config{Model: New(m), Env: env, Planned: true})
	if err != nil {
		t.Fatal(err)
	}
	res := s.Run(t.Context(), "Read the article.")
	if res.Stop != agent.StopDone || res.Answer != "Read it." {
		t.Fatalf("stop %s %q (%v)", res.Stop, res.Answer, res.Err)
	}
	if len(env.done) != 1 || len(bodies) != 3 {
		t.Fatalf("done %+v, %d requests", env.done, len(bodies))
	}
	names := func(b computerBody) (out []string) {
		for _, tl := range b.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if got := names(bodies[0]); len(got) != 1 || got[0] != computer.PlanTool {
		t.Errorf("first request offers %v, want the plan tool alone", got)
	}
	for _, c := range bodies[0].Messages[0].Content {
		if c.Type == "image" {
			t.Errorf("the first request carries the screen: %+v", bodies[0].Messages[0].Content)
		}
	}
	if got := names(bodies[1]); len(got) != 2 || got[0] != "computer" || got[1] != computer.PlanTool {
		t.Errorf("second request offers %v", got)
	}
	call, result := bodies[1].Messages[1].Content[0], bodies[1].Messages[2].Content[0]
	if call.Type != "tool_use" || call.Name != computer.PlanTool || len(result.Content) != 2 || result.Content[1].Type != "image" {
		t.Errorf("the plan call sent back as %+v, its result %+v", call, result)
	}
}
