package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// rein run --model openai:… --json, end to end, against a local server that
// speaks the Chat Completions wire format: a tool call, its result tied by
// id, the final answer, usage in the log, no key sent when there is none.
func TestRunOpenAICompatible(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "" {
			http.Error(w, `{"error":{"message":"a key was sent to a server that needs none"}}`, http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, body)
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		msg := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"calc","arguments":"{\"expression\":\"2+3\"}"}}]}`
		finish := "tool_calls"
		if n > 1 {
			msg, finish = `{"role":"assistant","content":"2+3 is 5."}`, "stop"
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-%d","object":"chat.completion","created":1767225600,"model":"local-model","choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":120,"completion_tokens":12,"total_tokens":132}}`, n, msg, finish)
	}))
	defer srv.Close()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("OPENAI_API_KEY", "")
	code, stdout, stderr := runRein(t, "", "run", "--model", "openai:local-model", "--base-url", srv.URL+"/v1/", "--tools", "calc",
		"--workdir", workIn(t, dir), "--audit-dir", filepath.Join(dir, "audit"), "--json", "What is 2+3?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var final struct {
		Stop, Answer string
		Steps        int
		Tokens       int64
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &final); err != nil || final.Stop != "done" || final.Answer != "2+3 is 5." || final.Steps != 2 || final.Tokens != 264 {
		t.Fatalf("final %s (%v)", lines[len(lines)-1], err)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	second, _ := json.Marshal(bodies[1])
	for _, want := range []string{`"tool_call_id":"call_abc"`, `"role":"tool"`, `5`, `"role":"system"`, `\u003cuser_input id=\"`} {
		if !strings.Contains(string(second), want) {
			t.Errorf("the second request lacks %s: %s", want, second)
		}
	}
	tools, _ := json.Marshal(bodies[0]["tools"])
	if !strings.Contains(string(tools), `"calc"`) || strings.Contains(string(tools), `"run_bash"`) {
		t.Errorf("offered tools %s: only the allowed ones may be offered", tools)
	}
}
