package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/reinhq/rein/model"
)

type oaiUsage = oai.CompletionUsage

// fmtAll formats err and every error it wraps in every verb a logger might use.
func fmtAll(err error) string {
	var b strings.Builder
	for e := err; e != nil; e = errors.Unwrap(e) {
		fmt.Fprintf(&b, "%v|%+v|%#v|%s|%q\n", e, e, e, e, e)
	}
	return b.String()
}

func userReq(text string) *model.Request {
	return &model.Request{Messages: []model.Message{{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock(text)}}}}
}

// A 429 with a zero Retry-After, then success: the SDK retries once.
func TestRetryAfter429(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		errorReply(429, "requests", "Rate limit reached for gpt-4o-mini.", map[string]string{"retry-after": "0"}),
		answer("hello", "stop", [3]int64{5, 1, 0}),
	)
	m := newTestModel(t, f.URL(), Options{})
	resp, err := m.Generate(t.Context(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "hello" || resp.StopReason != model.StopEndTurn {
		t.Errorf("got %q %s", resp.Text(), resp.StopReason)
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// API errors after the retries: how often it asked, what the error says and
// wraps, for the statuses that need different advice.
func TestAPIErrors(t *testing.T) {
	t.Parallel()
	now := map[string]string{"retry-after-ms": "0"}
	tests := []struct {
		name     string
		reply    reply
		retries  int
		requests int
		says     []string
	}{
		{"500 three times", errorReply(500, "server_error", "The server had an error.", now), 2, 3, []string{"500", "after 2 retries", "The server had an error."}},
		{"503 no retries", errorReply(503, "server_error", "Overloaded.", now), -1, 1, []string{"503", "after 0 retries"}},
		{"429 out of quota", errorReply(429, "insufficient_quota", "You exceeded your current quota.", now), 1, 2, []string{"429", "quota"}},
		{"401", errorReply(401, "invalid_request_error", "Incorrect API key provided.", nil), 2, 1, []string{"401", "check OPENAI_API_KEY"}},
		{"404 model", errorReply(404, "invalid_request_error", "The model `gpt-9` does not exist.", nil), 2, 1, []string{"404", `check the model name "gpt-4o-mini"`}},
		{"400", errorReply(400, "invalid_request_error", "Invalid schema for function 'calc'.", nil), 2, 1, []string{"400", "Invalid schema"}},
		{"not json", reply{status: 502, header: now, body: "<html>bad gateway</html>"}, 1, 2, []string{"502"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.reply)
			m := newTestModel(t, f.URL(), Options{MaxRetries: tt.retries})
			resp, err := m.Generate(t.Context(), userReq("hi"))
			if resp != nil || !errors.Is(err, ErrAPI) {
				t.Fatalf("resp %v err %v, want ErrAPI", resp, err)
			}
			if n := len(f.requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

// The finish reasons and a refusal map to rein's stop reasons; tool calls
// keep their ids and arguments.
func TestStopReasons(t *testing.T) {
	t.Parallel()
	c := call{"call_9", "calc", `{"expression":"1+1"}`}
	tests := []struct {
		name  string
		reply reply
		stop  string
		text  string
		calls int
	}{
		{"stop", answer("done", "stop", [3]int64{1, 1, 0}), model.StopEndTurn, "done", 0},
		{"tool_calls", answer("", "tool_calls", [3]int64{1, 1, 0}, c), model.StopToolUse, "", 1},
		{"stop with calls (local servers)", answer("", "stop", [3]int64{1, 1, 0}, c), model.StopToolUse, "", 1},
		{"length", answer("The answer is cut", "length", [3]int64{1, 1, 0}), model.StopMaxTokens, "The answer is cut", 0},
		{"content_filter", answer("", "content_filter", [3]int64{1, 1, 0}), model.StopRefusal, "", 0},
		{"refusal field", completionReply(map[string]any{"role": "assistant", "content": nil, "refusal": "I can't help with that."}, "stop", [3]int64{1, 1, 0}), model.StopRefusal, "I can't help with that.", 0},
		{"unknown passes through", answer("x", "insufficient_system_resource", [3]int64{1, 1, 0}), "insufficient_system_resource", "x", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.reply)
			resp, err := newTestModel(t, f.URL(), Options{}).Generate(t.Context(), userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != tt.stop || resp.Text() != tt.text || len(resp.Calls()) != tt.calls {
				t.Fatalf("stop %q text %q calls %d, want %q %q %d", resp.StopReason, resp.Text(), len(resp.Calls()), tt.stop, tt.text, tt.calls)
			}
			if tt.calls > 0 {
				got := resp.Calls()[0]
				if got.ID != c.id || got.Name != c.name || string(got.Args) != c.args {
					t.Errorf("call %+v", got)
				}
			}
		})
	}
}

// Usage splits cached prompt tokens out of input.
func TestUsage(t *testing.T) {
	t.Parallel()
	f := newFake(t, answer("ok", "stop", [3]int64{1000, 50, 400}))
	resp, err := newTestModel(t, f.URL(), Options{}).Generate(t.Context(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Usage{Input: 600, Output: 50, CacheRead: 400}
	if resp.Usage != want {
		t.Fatalf("usage %+v, want %+v", resp.Usage, want)
	}
	// A server reporting cache writes: they are out of Input too.
	u := toUsage(mustUsage(t, `{"prompt_tokens":100,"completion_tokens":1,"total_tokens":101,"prompt_tokens_details":{"cached_tokens":10,"cache_write_tokens":30}}`))
	if u != (model.Usage{Input: 60, Output: 1, CacheRead: 10, CacheWrite: 30}) {
		t.Errorf("usage with cache writes %+v", u)
	}
	// Nonsense counts never go negative.
	u = toUsage(mustUsage(t, `{"prompt_tokens":5,"completion_tokens":-3,"prompt_tokens_details":{"cached_tokens":10}}`))
	if u.Input < 0 || u.Output < 0 {
		t.Errorf("negative usage %+v", u)
	}
}

func mustUsage(t *testing.T, s string) (u oaiUsage) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), &u); err != nil {
		t.Fatal(err)
	}
	return u
}

// Without a key no Authorization header is sent (local servers); with one,
// it is a bearer token. The environment is not consulted when a key is given.
func TestAuthorizationHeader(t *testing.T) {
	t.Setenv(EnvAPIKey, "")
	t.Setenv(EnvBaseURL, "")
	f := newFake(t, answer("ok", "stop", [3]int64{1, 1, 0}))
	m, err := New(Options{Model: "llama3.1:8b", BaseURL: f.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), userReq("hi")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvAPIKey, "sk-from-env")
	if _, err := newTestModel(t, f.URL(), Options{APIKey: "sk-given"}).Generate(t.Context(), userReq("hi")); err != nil {
		t.Fatal(err)
	}
	m, err = New(Options{Model: "x", BaseURL: f.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), userReq("hi")); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	for i, want := range []string{"", "Bearer sk-given", "Bearer sk-from-env"} {
		h := reqs[i].header
		if got := h.Get("Authorization"); got != want {
			t.Errorf("request %d: Authorization %q, want %q", i+1, got, want)
		}
		if want == "" {
			for k, vs := range h {
				for _, v := range vs {
					if strings.Contains(strings.ToLower(k), "key") || strings.Contains(v, "sk-") {
						t.Errorf("request %d: header %s: %s with no key given", i+1, k, v)
					}
				}
			}
		}
	}
}

// The base URL comes from OPENAI_BASE_URL when not given.
func TestBaseURLFromEnv(t *testing.T) {
	f := newFake(t, answer("ok", "stop", [3]int64{1, 1, 0}))
	t.Setenv(EnvBaseURL, f.URL())
	m, err := New(Options{Model: "local", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if len(f.requests()) != 1 {
		t.Fatal("the server from OPENAI_BASE_URL was not asked")
	}
}

// A planted key never shows in error text, even when the server echoes it.
func TestKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	const key = "sk-proj-PLANTEDsecret0123456789"
	for _, status := range []int{400, 401, 403, 429, 500} {
		f := newFake(t, errorReply(status, "invalid_request_error", "Incorrect API key provided: "+key+". You can find your API key at https://platform.openai.com.", map[string]string{"retry-after-ms": "0"}))
		_, err := newTestModel(t, f.URL(), Options{APIKey: key, MaxRetries: -1}).Generate(t.Context(), userReq("hi"))
		if err == nil {
			t.Fatalf("%d: no error", status)
		}
		for _, text := range []string{err.Error(), fmtAll(err)} {
			if strings.Contains(text, key) || strings.Contains(text, "PLANTEDsecret") {
				t.Errorf("%d: the key is in the error: %s", status, text)
			}
		}
	}
	// A server that cannot be reached.
	_, err := newTestModel(t, "http://127.0.0.1:1/v1", Options{APIKey: key, MaxRetries: -1}).Generate(t.Context(), userReq("hi"))
	if !errors.Is(err, ErrUnreachable) || strings.Contains(err.Error(), key) {
		t.Errorf("unreachable: %v", err)
	}
}

// A cancelled context ends a call that the server holds, and the error is
// the context's cause.
func TestCancel(t *testing.T) {
	t.Parallel()
	f := newFake(t, reply{hold: true})
	m := newTestModel(t, f.URL(), Options{})
	ctx, cancel := context.WithCancelCause(t.Context())
	cause := errors.New("the user pressed ctrl-c")
	go func() {
		select {
		case <-f.arrived:
			cancel(cause)
		case <-ctx.Done():
		}
	}()
	_, err := m.Generate(ctx, userReq("hi"))
	if !errors.Is(err, cause) {
		t.Fatalf("err %v, want the cause", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests after cancel, want 1 (no retry)", n)
	}
}

// An attempt that takes longer than Timeout fails with ErrTimeout.
func TestTimeout(t *testing.T) {
	t.Parallel()
	f := newFake(t, reply{hold: true})
	m := newTestModel(t, f.URL(), Options{Timeout: 20 * time.Millisecond})
	_, err := m.Generate(t.Context(), userReq("hi"))
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "--llm-timeout") {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		o    Options
		want error
	}{
		{Options{}, ErrNoModel},
		{Options{Model: "  "}, ErrNoModel},
		{Options{Model: "m", BaseURL: "localhost:8080/v1"}, ErrBaseURL},
		{Options{Model: "m", BaseURL: "ftp://example.com/v1"}, ErrBaseURL},
		{Options{Model: "m", BaseURL: "http://"}, ErrBaseURL},
		{Options{Model: "m", BaseURL: "http://user:hunter2@example.com/v1"}, ErrBaseURL},
		{Options{Model: "m", BaseURL: "http://[::1"}, ErrBaseURL},
		{Options{Model: "m", BaseURL: "http://localhost:8080/v1"}, nil},
	} {
		m, err := New(tt.o)
		if !errors.Is(err, tt.want) {
			t.Errorf("New(%+v) = %v, want %v", tt.o, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error echoes the URL's password: %v", err)
		}
		if err == nil && m.Name() != "openai:"+tt.o.Model {
			t.Errorf("name %q", m.Name())
		}
	}
}

// OpenAI's own API gets max_completion_tokens (its reasoning models refuse
// max_tokens); other servers get max_tokens, which they all understand.
func TestTokenCapField(t *testing.T) {
	t.Parallel()
	f := newFake(t, answer("ok", "stop", [3]int64{1, 1, 0}))
	target, _ := url.Parse(f.srv.URL)
	redirect := &http.Client{Transport: rewriteHost{target}}
	m, err := New(Options{Model: "gpt-4o-mini", APIKey: "k", MaxTokens: 77, HTTPClient: redirect, BaseURL: "https://api.openai.com/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), userReq("hi")); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0].req
	if r.MaxCompletionTokens == nil || *r.MaxCompletionTokens != 77 || r.MaxTokens != nil {
		t.Errorf("max_completion_tokens %v max_tokens %v", r.MaxCompletionTokens, r.MaxTokens)
	}
}

// rewriteHost sends every request to target, as if it were the real API.
type rewriteHost struct{ target *url.URL }

func (rw rewriteHost) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = rw.target.Scheme, rw.target.Host
	return http.DefaultTransport.RoundTrip(r)
}

// A tool call of a type rein does not run comes back as an opaque block and
// is sent back unchanged; opaque blocks of other providers are dropped.
func TestOpaqueRoundTrip(t *testing.T) {
	t.Parallel()
	custom := `{"id":"call_c1","type":"custom","custom":{"name":"grammar","input":"SELECT 1"}}`
	var tc any
	_ = json.Unmarshal([]byte(custom), &tc)
	f := newFake(t,
		completionReply(map[string]any{"role": "assistant", "content": "Thinking.", "tool_calls": []any{tc}}, "tool_calls", [3]int64{1, 1, 0}),
		answer("done", "stop", [3]int64{1, 1, 0}),
	)
	m := newTestModel(t, f.URL(), Options{})
	resp, err := m.Generate(t.Context(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	var op *model.Opaque
	for _, b := range resp.Blocks {
		if b.Kind == model.KindOpaque {
			op = b.Opaque
		}
	}
	if op == nil || op.Provider != Provider || op.Type != OpaqueToolCall || !jsonEqual(op.Data, []byte(custom)) {
		t.Fatalf("blocks %+v, want the custom call as an opaque block", resp.Blocks)
	}
	req := userReq("hi")
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, Blocks: append(resp.Blocks,
			model.Block{Kind: model.KindOpaque, Opaque: &model.Opaque{Provider: "anthropic", Type: "thinking", Data: json.RawMessage(`{"type":"thinking"}`)}})},
		model.Message{Role: model.RoleUser, Blocks: []model.Block{
			model.ResultBlock(model.ToolResult{CallID: "call_c1", Name: "grammar", Content: "1"})}},
	)
	if _, err := m.Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	sent := f.requests()[1].req.Messages[1]
	if len(sent.ToolCalls) != 1 || string(sent.ToolCalls[0]) != string(op.Data) {
		t.Errorf("assistant tool_calls sent back %s, want exactly %s", sent.ToolCalls, op.Data)
	}
	if strings.Contains(string(f.requests()[1].body), "thinking") {
		t.Error("another provider's opaque block was sent")
	}
}
