package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The fake server speaks POST /v1/chat/completions as the API reference
// shows it (https://platform.openai.com/docs/api-reference/chat/create): it
// parses and checks each request the way the API does (a model, messages,
// a token cap, function tools with a schema, every tool_call answered by a
// "tool" message right after it and no tool message without its call) and
// answers with the reply scripted for that turn.

// wireReq is the request body as the server reads it.
type wireReq struct {
	Model               string     `json:"model"`
	Messages            []wireMsg  `json:"messages"`
	Tools               []wireTool `json:"tools"`
	MaxTokens           *int64     `json:"max_tokens"`
	MaxCompletionTokens *int64     `json:"max_completion_tokens"`
	Stream              bool       `json:"stream"`
}

type wireMsg struct {
	Role       string            `json:"role"`
	Content    json.RawMessage   `json:"content"`
	ToolCallID string            `json:"tool_call_id"`
	ToolCalls  []json.RawMessage `json:"tool_calls"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type wireCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// text is a message's content when it is a string.
func (m wireMsg) text() string {
	var s string
	_ = json.Unmarshal(m.Content, &s)
	return s
}

func (m wireMsg) calls() []wireCall {
	out := make([]wireCall, len(m.ToolCalls))
	for i, raw := range m.ToolCalls {
		_ = json.Unmarshal(raw, &out[i])
	}
	return out
}

// validate returns what the real API would answer 400 for.
func (r *wireReq) validate() error {
	if r.Model == "" {
		return fmt.Errorf("you must provide a model parameter")
	}
	if len(r.Messages) == 0 {
		return fmt.Errorf("'messages' must contain at least one message")
	}
	if (r.MaxTokens == nil) == (r.MaxCompletionTokens == nil) {
		return fmt.Errorf("send exactly one of max_tokens and max_completion_tokens")
	}
	if r.Stream {
		return fmt.Errorf("this fake does not stream")
	}
	for i, t := range r.Tools {
		if t.Type != "function" || t.Function.Name == "" || !bytes.HasPrefix(bytes.TrimSpace(t.Function.Parameters), []byte("{")) {
			return fmt.Errorf("tools[%d]: a function tool needs a name and an object schema", i)
		}
	}
	var pending map[string]bool // tool calls of the last assistant message not yet answered
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant":
			if len(pending) > 0 {
				return fmt.Errorf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'", i)
			}
			pending = nil
			if m.Role == "assistant" {
				pending = map[string]bool{}
				for _, c := range m.calls() {
					if c.ID == "" || c.Function.Name == "" && c.Type == "function" {
						return fmt.Errorf("messages[%d]: a tool call needs an id and a name", i)
					}
					pending[c.ID] = true
				}
				if m.Content == nil && len(m.ToolCalls) == 0 {
					return fmt.Errorf("messages[%d]: an assistant message needs content or tool_calls", i)
				}
			} else if m.Content == nil {
				return fmt.Errorf("messages[%d]: content is required", i)
			}
		case "tool":
			if !pending[m.ToolCallID] {
				return fmt.Errorf("messages[%d]: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (id %q)", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		default:
			return fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	return nil
}

// reply is one scripted answer.
type reply struct {
	status int               // 0 = 200
	header map[string]string // extra headers
	body   string            // the JSON body
	hold   bool              // wait until the client goes away, then answer nothing
}

// seen is one request as received.
type seen struct {
	header http.Header
	body   []byte
	req    wireReq
}

type fakeServer struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	got     []seen
	arrived chan struct{} // one value per request, never blocks the handler
}

// newFake starts a server that answers with replies in order; the last one
// repeats.
func newFake(t *testing.T, replies ...reply) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t, replies: replies, arrived: make(chan struct{}, 100)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) URL() string { return f.srv.URL + "/v1" }

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("read body: %v", err)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		f.t.Errorf("request %s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
		apiError(w, http.StatusNotFound, "invalid_request_error", "Invalid URL")
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		f.t.Errorf("Content-Type %q", ct)
	}
	var req wireReq
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("request body is not the API's JSON: %v\n%s", err, body)
		apiError(w, http.StatusBadRequest, "invalid_request_error", "We could not parse the JSON body of your request.")
		return
	}
	f.mu.Lock()
	n := len(f.got)
	f.got = append(f.got, seen{header: r.Header.Clone(), body: body, req: req})
	rep := f.replies[min(n, len(f.replies)-1)]
	f.mu.Unlock()
	f.arrived <- struct{}{}
	if err := req.validate(); err != nil {
		f.t.Errorf("request %d: the API would refuse it: %v\n%s", n+1, err, body)
		apiError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if rep.hold {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-request-id", fmt.Sprintf("req_%d", n+1))
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.status != 0 {
		w.WriteHeader(rep.status)
	}
	_, _ = io.WriteString(w, rep.body)
}

// requests returns the requests received so far.
func (f *fakeServer) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.got...)
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
	_, _ = w.Write(b)
}

// errorReply is an API error answer.
func errorReply(status int, typ, msg string, header map[string]string) reply {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
	return reply{status: status, header: header, body: string(b)}
}

// call is a tool call in a scripted answer.
type call struct{ id, name, args string }

// answer builds a chat.completion object as the API reference shows it.
func answer(content, finish string, usage [3]int64, calls ...call) reply {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "annotations": []any{}}
	if content != "" {
		msg["content"] = content
	}
	if len(calls) > 0 {
		var tc []any
		for _, c := range calls {
			tc = append(tc, map[string]any{"id": c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": c.args}})
		}
		msg["tool_calls"] = tc
	}
	return completionReply(msg, finish, usage)
}

// completionReply wraps a message; usage is prompt, completion, cached.
func completionReply(msg map[string]any, finish string, usage [3]int64) reply {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion", "created": 1741570283,
		"model": "gpt-4o-mini-2024-07-18", "service_tier": "default", "system_fingerprint": "fp_06737a9306",
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage": map[string]any{
			"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": usage[0] + usage[1],
			"prompt_tokens_details":     map[string]any{"cached_tokens": usage[2], "audio_tokens": 0},
			"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
		},
	})
	return reply{body: string(b)}
}
