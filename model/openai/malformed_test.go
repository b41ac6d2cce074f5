package openai

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

// rawServer answers every request with handler and counts the requests.
func rawServer(t *testing.T, handler func(w http.ResponseWriter)) (url string, hits *atomic.Int32) {
	t.Helper()
	hits = &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		handler(w)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", hits
}

// cut sends headers promising more body than it sends, then drops the
// connection: a server that died mid-answer.
func cut(ctype, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: " + ctype + "\r\nContent-Length: 4000\r\n\r\n" + body)
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
// the API's JSON is never reported as unreachable; the error names the
// base URL, the status, the content type and the start of the body with
// its control characters made harmless, and a 2xx answer is not retried.
func TestMalformedAnswers(t *testing.T) {
	t.Parallel()
	valid := answer("hi", "stop", [3]int64{1, 1, 0}).body
	for _, tc := range []struct {
		name    string
		handler func(http.ResponseWriter)
		want    error
		says    []string
		tries   int32 // with MaxRetries 2
	}{
		{"cut JSON", cut("application/json", valid[:60]), ErrResponse,
			[]string{"cut its answer short", "200 OK", "application/json", "cut after 60 bytes", `"{`}, 1},
		{"truncated JSON, whole body", fixed(200, "application/json", valid[:len(valid)-7]), ErrResponse,
			[]string{"not the Chat Completions API's JSON", "200 OK", "application/json", "--base-url", EnvBaseURL}, 1},
		{"200 with garbage", fixed(200, "application/json", "\x1b[31mhello\x00\u202e world"), ErrResponse,
			[]string{"not the Chat Completions API's JSON", "?[31mhello?? world"}, 1},
		{"200 HTML page", fixed(200, "text/html; charset=utf-8", "<!doctype html><title>Login</title>"), ErrResponse,
			[]string{"200 OK", "text/html", "<!doctype html><title>Login</title>"}, 1},
		{"200 JSON that is no completion", fixed(200, "application/json", `{"status":"ok"}`), ErrResponse,
			[]string{"no choices", `{'status':'ok'}`}, 1},
		{"502 HTML error page", fixed(502, "text/html", "<html><body><h1>502 Bad Gateway</h1>\n</body></html>"), ErrAPI,
			[]string{"502 Bad Gateway", "text/html", "<h1>502 Bad Gateway</h1>"}, 3},
		{"404 plain text", fixed(404, "text/plain", "404 page not found"), ErrAPI,
			[]string{"404 Not Found", "text/plain", "404 page not found", "base URL"}, 1},
		{"empty 200", fixed(200, "application/json", ""), ErrResponse,
			[]string{"200 OK", "empty body"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, hits := rawServer(t, tc.handler)
			_, err := newTestModel(t, url, Options{MaxRetries: 2}).Generate(t.Context(), userReq("hi"))
			if !errors.Is(err, tc.want) || errors.Is(err, ErrUnreachable) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			msg := err.Error()
			for _, s := range append(tc.says, url) {
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

// TestUnreachableNamesTheFix: a server that cannot be reached at all is
// ErrUnreachable, naming the URL and how to change it.
func TestUnreachableNamesTheFix(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now
	_, err = newTestModel(t, url, Options{MaxRetries: -1}).Generate(t.Context(), userReq("hi"))
	if !errors.Is(err, ErrUnreachable) || errors.Is(err, ErrResponse) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	for _, s := range []string{url, "--base-url", EnvBaseURL} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error does not say %q: %v", s, err)
		}
	}
}

// TestDuplicateCallIDs: a server that gives two calls one id gets both
// results back under distinct ids, each after its own call, so the next
// request is one the API accepts (the fake refuses two tool messages for
// one call, as the API does); both calls run, each answered once.
func TestDuplicateCallIDs(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		answer("", "tool_calls", [3]int64{10, 5, 0},
			call{"call_dup", "calc", `{"expression":"1+1"}`},
			call{"call_dup", "calc", `{"expression":"2+3"}`},
			call{"call_dup_2", "calc", `{"expression":"4+4"}`}),
		answer("2, 5 and 8.", "stop", [3]int64{20, 5, 0}),
	)
	res := testLoop(t, newTestModel(t, f.URL(), Options{}), budget.Defaults(), nil).Run(t.Context(), "Add.")
	if res.Stop != agent.StopDone || res.ToolCalls != 3 {
		t.Fatalf("stop %s, %d calls, err %v", res.Stop, res.ToolCalls, res.Err)
	}
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	got := toolMessages(reqs[1].req)
	want := map[string]string{"call_dup": "2", "call_dup_3": "5", "call_dup_2": "8"}
	if len(got) != len(want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	for id, v := range want {
		if got[id] != v {
			t.Errorf("result for %s = %q, want %q (all: %v)", id, got[id], v, got)
		}
	}
}
