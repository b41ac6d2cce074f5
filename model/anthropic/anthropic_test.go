package anthropic

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

func ask(task string) *model.Request {
	return &model.Request{Messages: []model.Message{{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock(task)}}}}
}

func TestRetry429ThenSuccess(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		reply{status: 429, header: map[string]string{"retry-after": "0"}, body: apiError("rate_limit_error", "slow down")},
		ok(message("end_turn", 5, 2, 0, 0, text("hi"))))
	resp, err := newTestModel(t, f, Options{}).Generate(t.Context(), ask("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "hi" || resp.StopReason != model.StopEndTurn {
		t.Errorf("resp = %+v", resp)
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestServerErrorAfterRetries(t *testing.T) {
	t.Parallel()
	fail := reply{status: 500, header: map[string]string{"retry-after": "0"}, body: apiError("api_error", "Internal server error")}
	f := newFake(t, fail, fail, fail)
	_, err := newTestModel(t, f, Options{MaxRetries: 2}).Generate(t.Context(), ask("hello"))
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want *APIError", err)
	}
	if apiErr.StatusCode != 500 || apiErr.Tries != 3 || apiErr.Type != "api_error" || apiErr.RequestID != "req_test" {
		t.Errorf("APIError = %+v", apiErr)
	}
	if n := len(f.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	for _, want := range []string{"500", "3 tries", "try again later", "Internal server error"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestNoRetryOn400(t *testing.T) {
	t.Parallel()
	f := newFake(t, reply{status: 400, body: apiError("invalid_request_error", "max_tokens: too large")})
	_, err := newTestModel(t, f, Options{}).Generate(t.Context(), ask("hello"))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || len(f.requests()) != 1 {
		t.Fatalf("err = %v after %d requests, want one 400", err, len(f.requests()))
	}
}

func TestStopReasons(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ wire, want string }{
		{"end_turn", model.StopEndTurn},
		{"tool_use", model.StopToolUse},
		{"max_tokens", model.StopMaxTokens},
		{"refusal", model.StopRefusal},
		{"stop_sequence", "stop_sequence"},
		{"pause_turn", "pause_turn"},
		{"model_context_window_exceeded", "model_context_window_exceeded"},
	} {
		t.Run(tc.wire, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, ok(message(tc.wire, 1, 1, 0, 0, text("partial"))))
			resp, err := newTestModel(t, f, Options{MaxTokens: 7}).Generate(t.Context(), ask("hello"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != tc.want {
				t.Errorf("stop = %q, want %q", resp.StopReason, tc.want)
			}
			if got := f.requests()[0].Req.MaxTokens; got != 7 {
				t.Errorf("max_tokens sent = %d, want 7", got)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	f := newFake(t, ok(message("end_turn", 1200, 340, 5000, 700, text("ok"))))
	resp, err := newTestModel(t, f, Options{}).Generate(t.Context(), ask("hello"))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Usage{Input: 1200, Output: 340, CacheRead: 5000, CacheWrite: 700}
	if resp.Usage != want {
		t.Fatalf("usage = %+v, want %+v", resp.Usage, want)
	}
}

// No key given and none in the environment: no credential header is sent.
// A key given is sent, and never appears in an error, even when the server
// echoes it.
func TestAPIKeyHandling(t *testing.T) {
	t.Setenv(EnvAPIKey, "")
	const key = "sk-ant-PLANTED-secret-0123456789"
	echo := reply{status: 401, body: apiError("authentication_error", "invalid x-api-key "+key)}
	f := newFake(t, ok(message("end_turn", 1, 1, 0, 0, text("hi"))), echo)
	if _, err := newTestModel(t, f, Options{}).Generate(t.Context(), ask("hello")); err != nil {
		t.Fatal(err)
	}
	_, err := newTestModel(t, f, Options{APIKey: key}).Generate(t.Context(), ask("hello"))
	if err == nil || strings.Contains(err.Error(), key) {
		t.Fatalf("err = %v: want an error without the key", err)
	}
	if !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), EnvAPIKey) {
		t.Errorf("err = %v: want the status and what to check", err)
	}
	reqs := f.requests()
	for _, h := range []string{"Authorization", "X-Api-Key"} {
		if v := reqs[0].Header.Get(h); v != "" {
			t.Errorf("keyless request sent %s: %q", h, v)
		}
	}
	if !strings.Contains(reqs[1].Header.Get("Authorization")+reqs[1].Header.Get("X-Api-Key"), key) {
		t.Errorf("the key was not sent: %v", reqs[1].Header)
	}
	// The key from the environment, and a connection error with it set.
	t.Setenv(EnvAPIKey, key)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	m, err := New(Options{Model: "claude-test", BaseURL: dead.URL, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if m.key != key {
		t.Error("the key was not taken from the environment")
	}
	if _, err := m.Generate(t.Context(), ask("hello")); err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("connection error = %v: want an error without the key", err)
	}
}

func TestCancelReturnsCause(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{})
	srv := hangingServer(t, func() { close(arrived) })
	m, err := New(Options{Model: "claude-test", BaseURL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("user pressed stop")
	ctx, cancel := context.WithCancelCause(t.Context())
	go func() { <-arrived; cancel(cause) }()
	_, err = m.Generate(ctx, ask("hello"))
	if !errors.Is(err, cause) {
		t.Fatalf("err = %v, want the context's cause", err)
	}
}

// hangingServer never answers: it calls arrived once per request and waits
// for the client to go away or the test to end.
func hangingServer(t *testing.T, arrived func()) *httptest.Server {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client hanging up
		arrived()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // runs first
	return srv
}

func TestAttemptTimeout(t *testing.T) {
	t.Parallel()
	srv := hangingServer(t, func() {})
	m, err := New(Options{Model: "claude-test", BaseURL: srv.URL, HTTPClient: srv.Client(), Timeout: 20 * time.Millisecond, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), ask("hello")); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestNew(t *testing.T) {
	t.Setenv(EnvBaseURL, "")
	for _, tc := range []struct {
		name string
		o    Options
		want error
	}{
		{"no model", Options{Model: " "}, ErrNoModel},
		{"ftp", Options{Model: "m", BaseURL: "ftp://example.com"}, ErrBaseURL},
		{"no host", Options{Model: "m", BaseURL: "http://"}, ErrBaseURL},
		{"relative", Options{Model: "m", BaseURL: "localhost:8080"}, ErrBaseURL},
		{"junk", Options{Model: "m", BaseURL: "http://[::1"}, ErrBaseURL},
		{"userinfo", Options{Model: "m", BaseURL: "https://user:sk-secret@example.com"}, ErrBaseURL},
		{"ok", Options{Model: "claude-sonnet-4-5"}, nil},
		{"local", Options{Model: "qwen", BaseURL: "http://127.0.0.1:11434"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(tc.o)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "sk-secret") {
				t.Errorf("error shows the URL's secret: %v", err)
			}
			if err == nil && m.Name() != "anthropic:"+tc.o.Model {
				t.Errorf("Name = %q", m.Name())
			}
		})
	}
}

// The base URL comes from the environment when Options has none.
func TestBaseURLFromEnv(t *testing.T) {
	f := newFake(t, ok(message("end_turn", 1, 1, 0, 0, text("hi"))))
	t.Setenv(EnvBaseURL, f.srv.URL)
	t.Setenv(EnvAPIKey, "")
	m, err := New(Options{Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), ask("hello")); err != nil || len(f.requests()) != 1 {
		t.Fatalf("err %v, %d requests", err, len(f.requests()))
	}
}

// The request body for a fixed conversation, against a golden file.
func TestRequestGolden(t *testing.T) {
	t.Parallel()
	m, err := New(Options{Model: "claude-sonnet-4-5", MaxTokens: 1024, BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	_, body, err := m.buildRequest(goldenRequest())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "request.golden.json")
	if *update {
		if err := os.WriteFile(path, append(body, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(body)+"\n" {
		t.Errorf("body differs from %s (run with -update to accept):\n%s", path, body)
	}
}

func goldenRequest() *model.Request {
	return &model.Request{
		System: "Be brief.",
		Tools: []model.ToolDef{
			{Name: "calc", Description: "Arithmetic.", Schema: []byte(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"],"additionalProperties":false}`)},
			{Name: "noop"},
		},
		Messages: []model.Message{
			{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("What is 2+3?")}},
			{Role: model.RoleAssistant, Blocks: []model.Block{
				{Kind: model.KindOpaque, Opaque: &model.Opaque{Provider: "anthropic", Type: "thinking", Data: []byte(thinkingBlock)}},
				{Kind: model.KindOpaque, Opaque: &model.Opaque{Provider: "openai", Type: "reasoning", Data: []byte(`{"x":1}`)}},
				model.TextBlock(""),
				model.CallBlock(model.ToolCall{ID: "toolu_01", Name: "calc", Args: []byte(`{"expression":"2+3"}`)}),
				model.CallBlock(model.ToolCall{ID: "toolu_02", Name: "calc", Args: []byte(`not json`)}),
			}},
			{Role: model.RoleUser, Blocks: []model.Block{
				model.ResultBlock(model.ToolResult{CallID: "toolu_01", Name: "calc", Content: "5"}),
				model.ResultBlock(model.ToolResult{CallID: "toolu_02", Name: "calc", Content: "arguments are not JSON", IsError: true}),
			}},
		},
	}
}

func TestBuildRequestErrors(t *testing.T) {
	t.Parallel()
	m, _ := New(Options{Model: "m", BaseURL: "http://127.0.0.1:1"})
	user := func(b ...model.Block) model.Message { return model.Message{Role: model.RoleUser, Blocks: b} }
	for name, req := range map[string]*model.Request{
		"no messages":   {},
		"only empty":    {Messages: []model.Message{user(model.TextBlock(""))}},
		"bad role":      {Messages: []model.Message{{Role: "system", Blocks: []model.Block{model.TextBlock("x")}}}},
		"bad kind":      {Messages: []model.Message{user(model.Block{Kind: "image"})}},
		"nil call":      {Messages: []model.Message{user(model.Block{Kind: model.KindToolCall})}},
		"nil result":    {Messages: []model.Message{user(model.Block{Kind: model.KindToolResult})}},
		"bad opaque":    {Messages: []model.Message{user(model.Block{Kind: model.KindOpaque, Opaque: &model.Opaque{Provider: "anthropic", Data: []byte(`[1]`)}})}},
		"schema array":  {Messages: []model.Message{user(model.TextBlock("x"))}, Tools: []model.ToolDef{{Name: "t", Schema: []byte(`[]`)}}},
		"schema broken": {Messages: []model.Message{user(model.TextBlock("x"))}, Tools: []model.ToolDef{{Name: "t", Schema: []byte(`{"type":`)}}},
	} {
		if _, _, err := m.buildRequest(req); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%s: err = %v, want ErrBadRequest", name, err)
		}
	}
	if _, err := m.Generate(t.Context(), nil); !errors.Is(err, ErrBadRequest) {
		t.Errorf("nil request: err = %v", err)
	}
}
