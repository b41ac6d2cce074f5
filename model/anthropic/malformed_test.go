package anthropic

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/budget"
)

// rawModel is a Model on a server that answers every request with handler,
// and the count of requests it got.
func rawModel(t *testing.T, retries int, handler func(w http.ResponseWriter)) (*Model, string, *atomic.Int32) {
	t.Helper()
	hits := &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		handler(w)
	}))
	t.Cleanup(srv.Close)
	m, err := New(Options{Model: "claude-test", BaseURL: srv.URL, MaxRetries: retries})
	if err != nil {
		t.Fatal(err)
	}
	return m, srv.URL, hits
}

// cut sends headers promising more body than it sends, then drops the
// connection: a server that died mid-answer.
func cut(body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nRetry-After-Ms: 0\r\nContent-Length: 4000\r\n\r\n" + body)
		_ = buf.Flush()
	}
}

func fixed(status int, ctype, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.Header().Set("Retry-After-Ms", "0")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// TestMalformedAnswers: a server that answers with something that is not
// the Messages API's JSON is never reported as a failed connection; the
// error names the base URL, the status, the content type and the start of
// the body with control characters made harmless. A whole 2xx body is not
// retried; a cut one is, as the SDK retries a dropped connection.
func TestMalformedAnswers(t *testing.T) {
	t.Parallel()
	valid := message("end_turn", 1, 1, 0, 0, text("hi"))
	for _, tc := range []struct {
		name    string
		handler func(http.ResponseWriter)
		api     int // the *APIError status wanted; 0: ErrBadResponse
		says    []string
		tries   int32 // with MaxRetries 2
	}{
		{"cut JSON", cut(valid[:50]), 0, []string{"cut its answer short", "3 tries", "200 OK", "cut after 50 bytes", `"{`}, 3},
		{"truncated JSON, whole body", fixed(200, "application/json", valid[:len(valid)-9]), 0,
			[]string{"not the Messages API's JSON", "200 OK", "application/json", "--base-url", EnvBaseURL}, 1},
		{"200 with garbage", fixed(200, "application/json", "\x1b]0;pwned\x07 \u202egarbage"), 0,
			[]string{"not the Messages API's JSON", "?]0;pwned? ?garbage"}, 1},
		{"200 HTML page", fixed(200, "text/html", "<!doctype html><title>Sign in</title>"), 0,
			[]string{"200 OK", "text/html", "<title>Sign in</title>"}, 1},
		{"empty 200", fixed(200, "application/json", ""), 0, []string{"200 OK", "empty body"}, 1},
		{"502 HTML error page", fixed(502, "text/html", "<html><h1>502 Bad Gateway</h1></html>"), 502,
			[]string{"502 Bad Gateway", "text/html", "<h1>502 Bad Gateway</h1>", "3 tries"}, 3},
		{"404 plain text", fixed(404, "text/plain", "404 page not found"), 404,
			[]string{"404 Not Found", "text/plain", "404 page not found", "base URL"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, url, hits := rawModel(t, 2, tc.handler)
			_, err := m.Generate(t.Context(), ask("hi"))
			var apiErr *APIError
			switch {
			case errors.Is(err, ErrUnreachable):
				t.Fatalf("err = %v: reported as unreachable", err)
			case tc.api == 0 && !errors.Is(err, ErrBadResponse):
				t.Fatalf("err = %v, want ErrBadResponse", err)
			case tc.api != 0 && (!errors.As(err, &apiErr) || apiErr.StatusCode != tc.api):
				t.Fatalf("err = %v, want an APIError %d", err, tc.api)
			}
			msg := err.Error()
			if tc.api == 0 {
				tc.says = append(tc.says, url)
			}
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("error does not say %q:\n%s", s, msg)
				}
			}
			for _, r := range msg {
				if r < 0x20 || r == 0x7f || r == '\u202e' {
					t.Errorf("error holds control character %U:\n%q", r, msg)
				}
			}
			if n := hits.Load(); n != tc.tries {
				t.Errorf("%d requests, want %d", n, tc.tries)
			}
		})
	}
}

// TestUnreachableNamesTheFix: a server that cannot be reached is
// ErrUnreachable, naming the URL and how to change it.
func TestUnreachableNamesTheFix(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	m, err := New(Options{Model: "claude-test", BaseURL: url, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), ask("hi"))
	if !errors.Is(err, ErrUnreachable) || errors.Is(err, ErrBadResponse) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	for _, s := range []string{url, "--base-url", EnvBaseURL} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error does not say %q: %v", s, err)
		}
	}
}

// TestDuplicateToolUseIDs: two tool_use blocks under one id both run, and
// go back with ids of their own and one result each, which the API (and
// the fake, like it) accepts.
func TestDuplicateToolUseIDs(t *testing.T) {
	t.Parallel()
	turn1 := message("tool_use", 10, 5, 0, 0,
		toolUse("toolu_dup", "calc", `{"expression":"1+1"}`),
		toolUse("toolu_dup", "calc", `{"expression":"2+3"}`))
	f := newFake(t,
		ok(turn1),
		reply{status: 200, body: message("end_turn", 20, 5, 0, 0, text("2 and 5.")), check: func(t *testing.T, r *wireRequest) {
			want := []string{"toolu_dup", "toolu_dup_2"}
			for i, id := range want {
				if b := r.block(t, 1, i); b.Type != "tool_use" || b.ID != id {
					t.Errorf("call %d = %+v, want id %s", i, b, id)
				}
				if b := r.block(t, 2, i); b.Type != "tool_result" || b.ToolUseID != id {
					t.Errorf("result %d = %+v, want id %s", i, b, id)
				}
			}
		}})
	res := newLoop(t, newTestModel(t, f, Options{}), budget.Defaults(), nil).Run(t.Context(), "Add.")
	if res.Stop != agent.StopDone || res.ToolCalls != 2 || res.Answer != "2 and 5." {
		t.Fatalf("stop %s, %d calls, answer %q, err %v", res.Stop, res.ToolCalls, res.Answer, res.Err)
	}
}
