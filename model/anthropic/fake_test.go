package anthropic

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// wireRequest is a POST /v1/messages body as the API reference describes it.
// Content blocks stay raw so tests can compare them byte for byte.
type wireRequest struct {
	Model     string `json:"model"`
	MaxTokens int64  `json:"max_tokens"`
	System    []struct {
		Type         string          `json:"type"`
		Text         string          `json:"text"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"system"`
	Tools []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"input_schema"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"tools"`
	Messages []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	} `json:"messages"`
}

// wireBlock is the part of a request content block the fake checks.
type wireBlock struct {
	Type         string          `json:"type"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	IsError      bool            `json:"is_error"`
	Content      json.RawMessage `json:"content"`
	Text         string          `json:"text"`
	CacheControl json.RawMessage `json:"cache_control"`
}

func (w *wireRequest) toolNames() []string {
	var n []string
	for _, t := range w.Tools {
		n = append(n, t.Name)
	}
	return n
}

// block decodes block j of message i.
func (w *wireRequest) block(t *testing.T, i, j int) wireBlock {
	t.Helper()
	var b wireBlock
	if err := json.Unmarshal(w.Messages[i].Content[j], &b); err != nil {
		t.Fatalf("message %d block %d: %v", i, j, err)
	}
	return b
}

// seen is one request the fake received.
type seen struct {
	Header http.Header
	Body   []byte
	Req    wireRequest
}

// reply is the fake's answer to one request. check, when set, looks at the
// request first.
type reply struct {
	status int
	header map[string]string
	body   string
	check  func(t *testing.T, r *wireRequest)
}

// fake is a Messages API server: it checks each request against the API's
// rules and answers from its script, in order.
type fake struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	script []reply
	got    []seen
}

func newFake(t *testing.T, script ...reply) *fake {
	t.Helper()
	f := &fake{t: t, script: script}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.got...)
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	t := f.t
	body, _ := io.ReadAll(r.Body)
	var wr wireRequest
	problem := ""
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		problem = fmt.Sprintf("%s %s: want POST /v1/messages", r.Method, r.URL.Path)
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		problem = "content-type is not application/json"
	case r.Header.Get("Anthropic-Version") == "":
		problem = "no anthropic-version header"
	case json.Unmarshal(body, &wr) != nil:
		problem = "body is not JSON: " + string(body)
	default:
		problem = validate(&wr)
	}
	f.mu.Lock()
	n := len(f.got)
	f.got = append(f.got, seen{Header: r.Header.Clone(), Body: body, Req: wr})
	var rep reply
	if n < len(f.script) {
		rep = f.script[n]
	} else {
		problem = fmt.Sprintf("request %d is past the script", n+1)
	}
	f.mu.Unlock()
	if problem != "" {
		t.Errorf("fake: request %d: %s", n+1, problem)
		writeJSON(w, 400, nil, apiError("invalid_request_error", problem))
		return
	}
	if rep.check != nil {
		rep.check(t, &wr)
	}
	writeJSON(w, rep.status, rep.header, rep.body)
}

// validate checks the rules of the API that rein must keep.
func validate(w *wireRequest) string {
	if w.Model == "" || w.MaxTokens <= 0 {
		return "model and max_tokens are required"
	}
	if len(w.Messages) == 0 || w.Messages[len(w.Messages)-1].Role != "user" {
		return "messages must end with a user message"
	}
	calls := map[string]bool{}
	for i, m := range w.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Sprintf("message %d has role %q", i, m.Role)
		}
		if len(m.Content) == 0 {
			return fmt.Sprintf("message %d is empty", i)
		}
		for j, raw := range m.Content {
			var b wireBlock
			if err := json.Unmarshal(raw, &b); err != nil {
				return fmt.Sprintf("message %d block %d: %v", i, j, err)
			}
			switch b.Type {
			case "text":
				if b.Text == "" {
					return "text content blocks must be non-empty"
				}
			case "tool_use":
				if m.Role != "assistant" || b.ID == "" || b.Name == "" || len(b.Input) == 0 || b.Input[0] != '{' {
					return fmt.Sprintf("message %d block %d: bad tool_use", i, j)
				}
				if _, dup := calls[b.ID]; dup {
					return fmt.Sprintf("messages.%d.content.%d: `tool_use` ids must be unique", i, j)
				}
				calls[b.ID] = false
			case "tool_result":
				answered, known := calls[b.ToolUseID]
				if m.Role != "user" || !known {
					return fmt.Sprintf("message %d block %d: tool_result for unknown tool_use_id %q", i, j, b.ToolUseID)
				}
				if answered {
					return fmt.Sprintf("messages.%d.content.%d: each tool_use must have a single result; found multiple `tool_result` blocks with id %s", i, j, b.ToolUseID)
				}
				calls[b.ToolUseID] = true
			}
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, header map[string]string, body string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_test")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// apiError is an error body as the API sends it.
func apiError(typ, msg string) string {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	return string(b)
}

// message is a Messages API response with the given content blocks (raw JSON).
func message(stop string, in, out, cacheRead, cacheWrite int, blocks ...string) string {
	return fmt.Sprintf(`{"id":"msg_01","type":"message","role":"assistant","model":"claude-test",`+
		`"content":[%s],"stop_reason":%q,"stop_sequence":null,`+
		`"usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d}}`,
		strings.Join(blocks, ","), stop, in, out, cacheRead, cacheWrite)
}

func text(s string) string {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
	return string(b)
}

func toolUse(id, name, input string) string {
	return fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":%s}`, id, name, input)
}

func ok(body string) reply { return reply{status: 200, body: body} }

// newTestModel is a Model pointed at f with no key.
func newTestModel(t *testing.T, f *fake, o Options) *Model {
	t.Helper()
	o.BaseURL = f.srv.URL
	if o.Model == "" {
		o.Model = "claude-test"
	}
	o.HTTPClient = f.srv.Client()
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
