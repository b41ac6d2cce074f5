package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/reinhq/rein/model"
)

// canned answers every request with one body, in process: the whole SDK
// path (status handling, decoding) runs, without a socket.
type canned struct {
	status int
	body   []byte
}

func (c canned) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: c.status, Status: http.StatusText(c.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(bytes.NewReader(c.body)),
		Request: r,
	}, nil
}

// FuzzGenerate: whatever body the server answers with, Generate returns a
// response or an error, never panics (a panic caught by Generate's recover
// fails the fuzzer too), and a response it returns is usable: every
// tool call has an id and a name, and its blocks survive the next request.
func FuzzGenerate(f *testing.F) {
	for _, r := range []reply{
		answer("hello", "stop", [3]int64{3, 1, 0}),
		answer("", "tool_calls", [3]int64{3, 1, 1}, call{"call_1", "calc", `{"expression":"1"}`}, call{"", "x", ""}),
		answer("cut", "length", [3]int64{3, 1, 0}),
		completionReply(map[string]any{"role": "assistant", "refusal": "no"}, "content_filter", [3]int64{0, 0, 0}),
		completionReply(map[string]any{"tool_calls": []any{map[string]any{"type": "custom", "id": "c", "custom": map[string]any{"name": "g", "input": "i"}}}}, "tool_calls", [3]int64{1, 1, 0}),
	} {
		f.Add(200, []byte(r.body))
	}
	for _, s := range []string{``, `null`, `[]`, `{}`, `{"choices":null}`, `{"choices":[null]}`, `{"choices":[{"message":null}]}`,
		`{"choices":[{"message":{"tool_calls":[null,{},{"type":"function"}]}}]}`,
		`{"choices":[{"message":{"content":["a"],"tool_calls":{"a":1}},"finish_reason":7}],"usage":{"prompt_tokens":"x"}}`,
		`{"choices":[{"message":{"tool_calls":[{"function":{"name":"a","arguments":"{\"x\":"}}]}}],"usage":{"prompt_tokens":-9223372036854775808,"prompt_tokens_details":{"cached_tokens":9223372036854775807}}}`,
		`{"error":{"message":"boom","type":"server_error"}}`, "\xff\xfe"} {
		f.Add(200, []byte(s))
	}
	f.Add(400, []byte(`{"error":{"message":"bad","type":"invalid_request_error"}}`))
	f.Add(401, []byte(`not json`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 200 || status > 599 || status >= 500 || status == 429 || status == 408 || status == 409 {
			status = 200 // retried statuses would only slow the fuzzer down
		}
		m, err := New(Options{Model: "m", BaseURL: "http://fuzz.invalid/v1", APIKey: "k", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: canned{status, body}}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := m.Generate(t.Context(), userReq("hi"))
		if err != nil {
			if strings.Contains(err.Error(), "panicked") {
				t.Fatalf("panic: %v", err)
			}
			if resp != nil {
				t.Fatal("a response with an error")
			}
			return
		}
		if resp.Usage.Input < 0 || resp.Usage.Output < 0 || resp.Usage.CacheRead < 0 || resp.Usage.CacheWrite < 0 {
			t.Fatalf("negative usage %+v", resp.Usage)
		}
		for _, c := range resp.Calls() {
			if c.ID == "" || len(c.Args) == 0 {
				t.Fatalf("unusable call %+v", c)
			}
		}
		for _, b := range resp.Blocks {
			if b.Kind == model.KindOpaque && !json.Valid(b.Opaque.Data) {
				t.Fatalf("opaque block with invalid JSON %q", b.Opaque.Data)
			}
		}
		// The response must go back in the next request without trouble.
		req := userReq("hi")
		req.Messages = append(req.Messages, model.Message{Role: model.RoleAssistant, Blocks: resp.Blocks})
		p, err := m.params(req)
		if err != nil {
			t.Fatalf("the answer cannot be sent back: %v", err)
		}
		if _, err := json.Marshal(p); err != nil {
			t.Fatalf("the next request cannot be encoded: %v", err)
		}
	})
}
