package scripted_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/jsonx"
	"github.com/reinhq/rein/model/scripted"
)

func parse(t *testing.T, src string) *scripted.Script {
	t.Helper()
	s, err := scripted.Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse(%s): %v", src, err)
	}
	return s
}

func TestParseOK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		src   string
		turns int
	}{
		{"one turn", `{"turns":[{"text":"hi"}]}`, 1},
		{"empty turn", `{"turns":[{}]}`, 1},
		{"null turn", `{"turns":[null]}`, 1},
		{"calls and usage", `{"turns":[{"text":"a","calls":[{"tool":"calc","args":{"expression":"1+1"}}],"usage":{"input":10,"output":2}},{"text":"b"}]}`, 2},
		{"call without args", `{"turns":[{"calls":[{"tool":"calc"}]}]}`, 1},
		{"args_raw malformed", `{"turns":[{"calls":[{"tool":"calc","args_raw":"{\"expression\":"}]}]}`, 1},
		{"args_raw empty", `{"turns":[{"calls":[{"tool":"calc","args_raw":""}]}]}`, 1},
		{"args_raw null is absent", `{"turns":[{"calls":[{"tool":"calc","args":{},"args_raw":null}]}]}`, 1},
		{"empty calls", `{"turns":[{"text":"a","calls":[]}]}`, 1},
		{"zero usage", `{"turns":[{"usage":{"input":0,"output":0}}]}`, 1},
		{"whitespace around", "\n  {\"turns\":[{\"text\":\"a\"}]}\n\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if s := parse(t, tt.src); len(s.Turns) != tt.turns {
				t.Errorf("Parse gave %d turns, want %d", len(s.Turns), tt.turns)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want string // substring of the message
	}{
		{"malformed JSON", "{\"turns\": [\n  {\"text\": \"a\",}\n]}", "line 2, column 16"},
		{"unterminated", `{"turns":[{"text":"a"`, "ends too early"},
		{"empty input", ``, "empty input"},
		{"not an object", `[{"text":"a"}]`, "must be an object"},
		{"unknown top-level field", `{"turns":[{"text":"a"}],"model":"x"}`, `unknown field "model"`},
		{"unknown turn field", `{"turns":[{"txt":"a"}]}`, `unknown field "txt"`},
		{"unknown call field", `{"turns":[{"calls":[{"tool":"a","arguments":{}}]}]}`, `unknown field "arguments"`},
		{"unknown usage field", `{"turns":[{"usage":{"input":1,"cached":2}}]}`, `unknown field "cached"`},
		{"duplicate key", `{"turns":[{"text":"a","text":"b"}]}`, `key "text" appears twice`},
		{"duplicate args key", `{"turns":[{"calls":[{"tool":"send_email","args":{"to":"a@b.com","To":"c@d.com"}}]}]}`, `keys "to" and "To"`},
		{"wrong type", `{"turns":[{"text":5}]}`, `"turns.text" must be a string`},
		{"no turns", `{}`, "it has no turns"},
		{"null turns", `{"turns":null}`, "it has no turns"},
		{"empty turns", `{"turns":[]}`, "it has no turns"},
		{"call without tool", `{"turns":[{"calls":[{"args":{}}]}]}`, `turn 1, call 1 has no "tool"`},
		{"call with empty tool", `{"turns":[{"text":"a"},{"calls":[{"tool":"a"},{"tool":""}]}]}`, `turn 2, call 2 has no "tool"`},
		{"null call", `{"turns":[{"calls":[null]}]}`, `turn 1, call 1 has no "tool"`},
		{"args array", `{"turns":[{"calls":[{"tool":"a","args":[1]}]}]}`, `turn 1, call 1 (a): "args" must be a JSON object, not array`},
		{"args string", `{"turns":[{"calls":[{"tool":"a","args":"{}"}]}]}`, "not string"},
		{"args number", `{"turns":[{"calls":[{"tool":"a","args":1}]}]}`, "not number"},
		{"args boolean", `{"turns":[{"calls":[{"tool":"a","args":true}]}]}`, "not boolean"},
		{"args null", `{"turns":[{"calls":[{"tool":"a","args":null}]}]}`, "not null"},
		{"args and args_raw", `{"turns":[{"calls":[{"tool":"a","args":{},"args_raw":"{}"}]}]}`, `turn 1, call 1 (a) has both "args" and "args_raw"`},
		{"args_raw not a string", `{"turns":[{"calls":[{"tool":"a","args_raw":{}}]}]}`, `"turns.calls.args_raw" must be a string`},
		{"negative input", `{"turns":[{"text":"a"},{"usage":{"input":-1,"output":0}}]}`, "turn 2: usage cannot be negative"},
		{"negative output", `{"turns":[{"usage":{"input":0,"output":-5}}]}`, "turn 1: usage cannot be negative"},
		{"fractional usage", `{"turns":[{"usage":{"input":1.5}}]}`, "a whole number"},
		{"trailing garbage", `{"turns":[{"text":"a"}]} x`, "line 1, column 26: unexpected data"},
		{"second document", "{\"turns\":[{\"text\":\"a\"}]}\n{\"turns\":[]}", "line 2, column 1: unexpected data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := scripted.Parse([]byte(tt.src))
			if !errors.Is(err, scripted.ErrScript) {
				t.Fatalf("Parse(%s) = %+v, %v; want an error matching ErrScript", tt.src, s, err)
			}
			if s != nil {
				t.Errorf("Parse(%s) returned a script with its error", tt.src)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%s) = %q, want it to contain %q", tt.src, err, tt.want)
			}
		})
	}
}

// conversation plays m like the loop does: each response goes back into the
// request, followed by a user message.
type conversation struct {
	m   *scripted.Model
	req model.Request
}

func (c *conversation) next(t *testing.T) *model.Response {
	t.Helper()
	resp, err := c.m.Generate(t.Context(), &c.req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	c.req.Messages = append(c.req.Messages,
		model.Message{Role: model.RoleAssistant, Blocks: resp.Blocks},
		model.Message{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("go on")}})
	return resp
}

type wantCall struct{ id, name, args string }

func calls(resp *model.Response) []wantCall {
	var got []wantCall
	for _, c := range resp.Calls() {
		got = append(got, wantCall{c.ID, c.Name, string(c.Args)})
	}
	return got
}

func TestPlayback(t *testing.T) {
	t.Parallel()
	const src = `{"turns":[
		{"text":"first","calls":[{"tool":"read_file","args":{"path": "a.txt"}},{"tool":"calc"}]},
		{"calls":[{"tool":"calc","args_raw":"{\"expression\":"}]},
		{"text":"last"}
	]}`
	tests := []struct {
		text  string
		calls []wantCall
		stop  string
	}{
		{"first", []wantCall{{"call_1_1", "read_file", `{"path": "a.txt"}`}, {"call_1_2", "calc", `{}`}}, model.StopToolUse},
		{"", []wantCall{{"call_2_1", "calc", `{"expression":`}}, model.StopToolUse},
		{"last", nil, model.StopEndTurn},
		{"last", nil, model.StopEndTurn}, // after the script: the last text, again
		{"last", nil, model.StopEndTurn},
	}
	c := &conversation{m: scripted.New("scripted:test", parse(t, src))}
	for i, want := range tests {
		resp := c.next(t)
		if got := resp.Text(); got != want.text {
			t.Errorf("turn %d: text %q, want %q", i+1, got, want.text)
		}
		if got := calls(resp); !slices.Equal(got, want.calls) {
			t.Errorf("turn %d: calls %q, want %q", i+1, got, want.calls)
		}
		if resp.StopReason != want.stop {
			t.Errorf("turn %d: stop reason %q, want %q", i+1, resp.StopReason, want.stop)
		}
		if want.text == "" && len(resp.Blocks) != len(want.calls) {
			t.Errorf("turn %d: empty text gave a block: %+v", i+1, resp.Blocks)
		}
	}
	if got := c.m.Name(); got != "scripted:test" {
		t.Errorf("Name() = %q", got)
	}
}

func TestAfterLastTurnWithCalls(t *testing.T) {
	t.Parallel()
	c := &conversation{m: scripted.New("s", parse(t, `{"turns":[{"text":"again","calls":[{"tool":"send_email","args":{"to":"a@b.com"}}]}]}`))}
	first := c.next(t)
	if got := calls(first); len(got) != 1 || got[0].id != "call_1_1" || first.StopReason != model.StopToolUse {
		t.Fatalf("first response: calls %q, stop %q", got, first.StopReason)
	}
	for i := range 3 {
		resp := c.next(t)
		if resp.Text() != "again" || len(resp.Calls()) != 0 || resp.StopReason != model.StopEndTurn {
			t.Errorf("response %d after the script: text %q, calls %q, stop %q; want the text, no calls, end_turn",
				i+2, resp.Text(), calls(resp), resp.StopReason)
		}
	}
}

func TestScriptNotShared(t *testing.T) {
	t.Parallel()
	s := parse(t, `{"turns":[{"text":"a"},{"text":"b"}]}`)
	m1, m2 := scripted.New("1", s), scripted.New("2", s)
	ctx := t.Context()
	for _, m := range []*scripted.Model{m1, m1, m2} {
		if _, err := m.Generate(ctx, &model.Request{}); err != nil {
			t.Fatal(err)
		}
	}
	r1, _ := m1.Generate(ctx, &model.Request{})
	r2, _ := m2.Generate(ctx, &model.Request{})
	if r1.Text() != "b" || r2.Text() != "b" {
		t.Errorf("two models over one script: %q and %q, want each to keep its own place", r1.Text(), r2.Text())
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	t.Run("given", func(t *testing.T) {
		t.Parallel()
		m := scripted.New("s", parse(t, `{"turns":[{"text":"a","usage":{"input":1234,"output":56}},{"text":"b","usage":{"input":0,"output":0}}]}`))
		req := &model.Request{System: strings.Repeat("x", 1000)}
		for _, want := range []model.Usage{{Input: 1234, Output: 56}, {}, {}} {
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != want {
				t.Errorf("usage %+v, want %+v", resp.Usage, want)
			}
		}
	})
	t.Run("estimated", func(t *testing.T) {
		t.Parallel()
		// "abcd" and calc with {"expression":"1+1"}: 4 + 4 + 20 = 28 characters.
		m := scripted.New("s", parse(t, `{"turns":[{"text":"abcd","calls":[{"tool":"calc","args":{"expression":"1+1"}}]},{"text":"done"}]}`))
		c := &conversation{m: m, req: model.Request{System: "You are terse."}}
		prev := int64(-1)
		for i := range 4 {
			before := model.EstimateTokens(&c.req)
			resp := c.next(t)
			if resp.Usage.Input != before {
				t.Errorf("turn %d: input %d, want EstimateTokens(req) = %d", i+1, resp.Usage.Input, before)
			}
			if resp.Usage.Input <= prev {
				t.Errorf("turn %d: input %d did not grow from %d as the conversation did", i+1, resp.Usage.Input, prev)
			}
			prev = resp.Usage.Input
			if want := model.EstimateOutputTokens(resp.Blocks); resp.Usage.Output != want {
				t.Errorf("turn %d: output %d, want %d", i+1, resp.Usage.Output, want)
			}
			if i == 0 && resp.Usage.Output != 7 {
				t.Errorf("turn 1: output %d, want 7 (28 characters)", resp.Usage.Output)
			}
			if resp.Usage.CacheRead != 0 || resp.Usage.CacheWrite != 0 {
				t.Errorf("turn %d: cache usage %+v, want none", i+1, resp.Usage)
			}
		}
		if first := model.EstimateTokens(&model.Request{System: "You are terse."}); first != 4 {
			t.Errorf("the first request estimates %d tokens, want 4 (14 characters)", first)
		}
	})
}

func TestCancelled(t *testing.T) {
	t.Parallel()
	m := scripted.New("s", parse(t, `{"turns":[{"text":"one"},{"text":"two"}]}`))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for range 3 {
		resp, err := m.Generate(ctx, &model.Request{})
		if !errors.Is(err, context.Canceled) || resp != nil {
			t.Fatalf("Generate with a cancelled context = %+v, %v; want context.Canceled", resp, err)
		}
	}
	resp, err := m.Generate(t.Context(), &model.Request{})
	if err != nil || resp.Text() != "one" {
		t.Errorf("Generate after cancelled calls = %q, %v; want the first turn", resp.Text(), err)
	}

	dctx, dcancel := context.WithDeadline(t.Context(), fixedPast)
	defer dcancel()
	if _, err := m.Generate(dctx, &model.Request{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Generate past its deadline = %v, want context.DeadlineExceeded", err)
	}
	if resp, _ := m.Generate(t.Context(), &model.Request{}); resp.Text() != "two" {
		t.Errorf("after a timed-out call the model gave %q, want the second turn", resp.Text())
	}
}

// fixedPast is a deadline that has always passed.
var fixedPast = time.Unix(1, 0)

func TestConcurrentGenerate(t *testing.T) {
	t.Parallel()
	const n = 32
	var b strings.Builder
	b.WriteString(`{"turns":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"text":"t%d","calls":[{"tool":"calc"}]}`, i+1)
	}
	b.WriteString(`]}`)
	m := scripted.New("s", parse(t, b.String()))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen []string
	)
	for range n {
		wg.Go(func() {
			resp, err := m.Generate(t.Context(), &model.Request{})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			seen = append(seen, resp.Calls()[0].ID)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(seen)
	if seen = slices.Compact(seen); len(seen) != n {
		t.Errorf("%d concurrent calls got %d distinct turns, want %d", n, len(seen), n)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(`{"turns":[{"text":"a"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"turns":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := scripted.Load(good); err != nil || len(s.Turns) != 1 {
		t.Errorf("Load(good) = %+v, %v", s, err)
	}
	missing := filepath.Join(dir, "missing.json")
	_, err := scripted.Load(missing)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(missing) = %v; want a not-exist error naming %s", err, missing)
	}
	_, err = scripted.Load(bad)
	if !errors.Is(err, scripted.ErrScript) || !strings.Contains(err.Error(), bad) {
		t.Errorf("Load(bad) = %v; want ErrScript naming %s", err, bad)
	}
}

func TestToolsAndCheckTools(t *testing.T) {
	t.Parallel()
	s := parse(t, `{"turns":[
		{"calls":[{"tool":"read_file"},{"tool":"calc"}]},
		{"text":"x"},
		{"calls":[{"tool":"calc"},{"tool":"send_emial"},{"tool":"bogus"}]}
	]}`)
	if got, want := s.Tools(), []string{"bogus", "calc", "read_file", "send_emial"}; !slices.Equal(got, want) {
		t.Errorf("Tools() = %q, want %q", got, want)
	}
	if got := parse(t, `{"turns":[{"text":"x"}]}`).Tools(); len(got) != 0 {
		t.Errorf("Tools() of a script without calls = %q, want none", got)
	}
	tests := []struct {
		name  string
		known []string
		want  string // "" for no error
	}{
		{"all known", []string{"read_file", "calc", "send_emial", "bogus"}, ""},
		{"first unknown named", []string{"read_file", "calc"}, `turn 3, call 2 calls unknown tool "send_emial"`},
		{"earliest unknown", []string{"calc"}, `turn 1, call 1 calls unknown tool "read_file"`},
		{"last unknown", []string{"read_file", "calc", "send_emial"}, `turn 3, call 3 calls unknown tool "bogus"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := s.CheckTools(func(name string) bool { return slices.Contains(tt.known, name) })
			if tt.want == "" {
				if err != nil {
					t.Errorf("CheckTools = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, scripted.ErrScript) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckTools = %v, want ErrScript containing %q", err, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"turns":[{"text":"hi"}]}`,
		`{"turns":[{"text":"a","calls":[{"tool":"calc","args":{"expression":"1+1"}}],"usage":{"input":1,"output":2}},{"text":"b"}]}`,
		`{"turns":[{"calls":[{"tool":"x","args_raw":"{"}]}]}`,
		`{"turns":[{"calls":[{"tool":"x","args_raw":""}]}]}`,
		`{"turns":[null,{"calls":[{"tool":"t"}]}]}`,
		`{"turns":[{"calls":[{"tool":"x","args":null}]}]}`,
		`{"turns":[{"calls":[{"tool":"x","args":{},"args_raw":null}]}]}`,
		`{"turns":[{"usage":{"input":-1}}]}`,
		`{"turns":[]}`,
		`{"turns":[{"text":"a"}]} x`,
		"{\"turns\":[{\"calls\":[{\"tool\":\"\u00e9\",\"args_raw\":\"\\u00ff\\\"\"}]}]}",
		`{"Turns":[{"TEXT":"a","Calls":[{"Tool":"x"}]}]}`,
		`{"turns":[{"calls":[{"tool":"x","args":{"a":{"b":[1,{"c":null}]}}}]},{},{}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scripted.Parse(data)
		if err != nil {
			if !errors.Is(err, scripted.ErrScript) {
				t.Fatalf("Parse error %v does not match ErrScript", err)
			}
			return
		}
		m := scripted.New("fuzz", s)
		req := &model.Request{}
		for i := range len(s.Turns) + 2 {
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatalf("turn %d: %v", i+1, err)
			}
			got := resp.Calls()
			var want []scripted.Call
			if i < len(s.Turns) {
				want = s.Turns[i].Calls
			}
			if len(got) != len(want) {
				t.Fatalf("turn %d: %d calls, want %d", i+1, len(got), len(want))
			}
			for j, c := range got {
				if c.Name == "" {
					t.Fatalf("turn %d: call %d has no tool name", i+1, j+1)
				}
				if want[j].ArgsRaw == nil && !jsonx.IsObject(c.Args) {
					t.Fatalf("turn %d: call %d args %q are not a JSON object", i+1, j+1, c.Args)
				}
				if id := fmt.Sprintf("call_%d_%d", i+1, j+1); c.ID != id {
					t.Fatalf("turn %d: call %d has ID %q, want %q", i+1, j+1, c.ID, id)
				}
			}
			if (len(got) > 0) != (resp.StopReason == model.StopToolUse) {
				t.Fatalf("turn %d: %d calls with stop reason %q", i+1, len(got), resp.StopReason)
			}
			req.Messages = append(req.Messages, model.Message{Role: model.RoleAssistant, Blocks: resp.Blocks})
		}
	})
}

// A turn's contract becomes its first call, to propose_contract; a
// contract that is not an object is refused with the turn's number.
func TestContractTurn(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse([]byte(`{"turns":[{"text":"plan","contract":{"effects":[]},"calls":[{"tool":"read_file","args":{"path":"a"}}]},{"text":"done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	calls := s.Turns[0].Calls
	if len(calls) != 2 || calls[0].Tool != scripted.ProposeContract || string(calls[0].Args) != `{"effects":[]}` || calls[1].Tool != "read_file" {
		t.Errorf("calls = %+v, want propose_contract then read_file", calls)
	}
	if _, err := scripted.Parse([]byte(`{"turns":[{"text":"x","contract":[1]}]}`)); err == nil || !strings.Contains(err.Error(), `turn 1: "contract" must be a JSON object`) {
		t.Errorf("err = %v, want the turn named", err)
	}
}
