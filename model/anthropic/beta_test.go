package anthropic

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBeta(t *testing.T) {
	t.Parallel()
	var beta, body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		beta = r.Header.Get("anthropic-beta")
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"m","stop_reason":"end_turn",
			"usage":{"input_tokens":1,"output_tokens":1},"content":[{"type":"text","text":"ok"}]}`)
	}))
	defer srv.Close()
	m, err := New(Options{Model: "claude-test", BaseURL: srv.URL, MaxRetries: -1, MaxTokens: 77})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := m.Beta(t.Context(), "some-beta-1", map[string]any{"system": "s"})
	if err != nil {
		t.Fatal(err)
	}
	if beta != "some-beta-1" || len(msg.Content) != 1 || msg.Content[0].Text != "ok" {
		t.Errorf("beta %q, message %+v", beta, msg.Content)
	}
	for _, want := range []string{`"model":"claude-test"`, `"max_tokens":77`, `"system":"s"`} {
		if !strings.Contains(body, want) {
			t.Errorf("body %s lacks %s", body, want)
		}
	}
	// The Model's name and output cap are not the caller's to change.
	for _, k := range []string{"model", "max_tokens"} {
		if _, err := m.Beta(t.Context(), "b", map[string]any{k: "x"}); !errors.Is(err, ErrBadRequest) {
			t.Errorf("field %s: err = %v, want ErrBadRequest", k, err)
		}
	}
}
