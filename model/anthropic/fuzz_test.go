package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/reinhq/rein/model"
)

// bodyTransport answers every request with a fixed status and body, with no
// network, so fuzzing runs through the SDK's whole decoding path.
type bodyTransport struct {
	status int
	body   []byte
}

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: b.status, Status: http.StatusText(b.status), Request: r,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(bytes.NewReader(b.body)), ContentLength: int64(len(b.body)),
	}, nil
}

func transportModel(tb testing.TB, status int, body []byte) *Model {
	tb.Helper()
	m, err := New(Options{Model: "claude-test", BaseURL: "http://fuzz.invalid", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bodyTransport{status, body}}})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// FuzzResponse: whatever body the server sends, the provider never panics,
// and what it returns is usable: every call has an id, every opaque block is
// a JSON object that the next request carries byte for byte.
func FuzzResponse(f *testing.F) {
	f.Add(200, []byte(message("end_turn", 1, 2, 3, 4, text("hi"))))
	f.Add(200, []byte(message("tool_use", 1, 2, 0, 0, thinkingBlock, redactedBlock, toolUse("toolu_1", "calc", `{"expression":"1"}`))))
	f.Add(200, []byte(message("refusal", 1, 2, 0, 0)))
	f.Add(200, []byte(`{"content":[{"type":"tool_use","id":"","name":"x","input":null}],"stop_reason":"tool_use"}`))
	f.Add(200, []byte(`{"content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{"q":1}},{"type":"text"}],"usage":{"input_tokens":-5}}`))
	f.Add(200, []byte(`{"content":"nope","stop_reason":7,"usage":[]}`))
	f.Add(200, []byte(`{"content":[1,"a",null,[],{"type":"thinking","thinking":"\ud800"}]}`))
	f.Add(200, []byte(`null`))
	f.Add(200, []byte(``))
	f.Add(429, []byte(apiError("rate_limit_error", "slow")))
	f.Add(500, []byte(`<html>oops</html>`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 200 || status > 599 {
			status = 200 + (status%400+400)%400
		}
		m := transportModel(t, status, body)
		type result struct {
			resp *model.Response
			err  error
		}
		done := make(chan result, 1)
		go func() {
			resp, err := m.Generate(t.Context(), ask("hello"))
			done <- result{resp, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(10 * time.Second): // a hang, not a timing assertion
			t.Fatalf("Generate hangs on status %d body %q", status, body)
		}
		resp, err := r.resp, r.err
		if err != nil {
			if resp != nil {
				t.Fatal("a response with an error")
			}
			return
		}
		if resp.Usage.Input < 0 || resp.Usage.Output < 0 || resp.Usage.CacheRead < 0 || resp.Usage.CacheWrite < 0 {
			t.Fatalf("negative usage %+v", resp.Usage)
		}
		var opaque [][]byte
		for _, c := range resp.Calls() {
			if c.ID == "" || !json.Valid(c.Args) {
				t.Fatalf("bad call %+v", c)
			}
		}
		for _, b := range resp.Blocks {
			if b.Kind == model.KindOpaque {
				if !isObject(b.Opaque.Data) {
					t.Fatalf("opaque block is not an object: %q", b.Opaque.Data)
				}
				opaque = append(opaque, b.Opaque.Data)
			}
		}
		// The next request must be buildable and carry every opaque block as is.
		req := ask("hello")
		req.Messages = append(req.Messages, model.Message{Role: model.RoleAssistant, Blocks: resp.Blocks})
		var results []model.Block
		for _, c := range resp.Calls() {
			results = append(results, model.ResultBlock(model.ToolResult{CallID: c.ID, Content: "ok"}))
		}
		req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Blocks: append(results, model.TextBlock("go on"))})
		_, next, err := m.buildRequest(req)
		if err != nil {
			t.Fatalf("the answer cannot be sent back: %v", err)
		}
		if !json.Valid(next) {
			t.Fatalf("next request is not JSON: %s", next)
		}
		for _, o := range opaque {
			if !bytes.Contains(next, o) {
				t.Fatalf("opaque block %s not carried unchanged", o)
			}
		}
	})
}

// FuzzRequest: any text, tool arguments and opaque data either build a
// valid JSON body that carries the opaque data unchanged, or an error.
func FuzzRequest(f *testing.F) {
	f.Add("hello", `{"a":1}`, thinkingBlock)
	f.Add(`rein-opaque-x-0 "quoted" <>&`, `not json`, `{"type":"x","s":"\u2028 \\ \""}`)
	f.Add("", `[]`, `{ "spaced" : true }`)
	f.Add("\xff\xfe", `{"x":"\ud800"}`, `{"a":"\xff"}`)
	m, err := New(Options{Model: "m", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, txt, args, opaque string) {
		req := &model.Request{System: txt, Tools: []model.ToolDef{{Name: txt, Description: txt}}, Messages: []model.Message{
			{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock(txt + "?")}},
			{Role: model.RoleAssistant, Blocks: []model.Block{
				{Kind: model.KindOpaque, Opaque: &model.Opaque{Provider: ProviderName, Type: "thinking", Data: []byte(opaque)}},
				model.TextBlock(txt),
				model.CallBlock(model.ToolCall{ID: "toolu_1", Name: txt, Args: []byte(args)}),
			}},
			{Role: model.RoleUser, Blocks: []model.Block{model.ResultBlock(model.ToolResult{CallID: "toolu_1", Content: txt, IsError: true})}},
		}}
		_, body, err := m.buildRequest(req)
		if err != nil {
			if isObject([]byte(opaque)) {
				t.Fatalf("a valid opaque block was refused: %v", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("body is not JSON: %s", body)
		}
		if !bytes.Contains(body, []byte(opaque)) {
			t.Fatalf("opaque data changed in %s", body)
		}
		if bytes.Contains(body, []byte("rein-opaque-")) && !bytes.Contains([]byte(txt+args+opaque), []byte("rein-opaque-")) {
			t.Fatalf("a placeholder was left in %s", body)
		}
	})
}
