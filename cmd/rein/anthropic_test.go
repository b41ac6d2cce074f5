package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// rein run --model anthropic:… --json, end to end, against a local server
// that speaks the Messages wire format: a tool call, its result tied by id,
// the final answer; the key comes from ANTHROPIC_API_KEY and never shows.
func TestRunAnthropic(t *testing.T) {
	const key = "sk-ant-test-0123456789abcdefghijklmnop"
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" || r.Header.Get("anthropic-version") == "" {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"no"}}`, http.StatusNotFound)
			return
		}
		if !strings.Contains(r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"), key) {
			http.Error(w, `{"type":"error","error":{"type":"authentication_error","message":"no key"}}`, http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		content, stop := `[{"type":"text","text":"Let me compute."},{"type":"tool_use","id":"toolu_01","name":"calc","input":{"expression":"6*7"}}]`, "tool_use"
		if n > 1 {
			content, stop = `[{"type":"text","text":"6*7 is 42."}]`, "end_turn"
		}
		fmt.Fprintf(w, `{"id":"msg_%d","type":"message","role":"assistant","model":"claude-test","content":%s,"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}`, n, content, stop)
	}))
	defer srv.Close()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("ANTHROPIC_API_KEY", key)
	auditDir := filepath.Join(dir, "audit")
	code, stdout, stderr := runRein(t, "", "run", "--model", "anthropic:claude-test", "--base-url", srv.URL, "--tools", "calc",
		"--workdir", workIn(t, dir), "--audit-dir", auditDir, "--json", "What is 6*7?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var final struct{ Stop, Answer, Audit string }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &final); err != nil || final.Stop != "done" || final.Answer != "6*7 is 42." {
		t.Fatalf("final %s (%v)", lines[len(lines)-1], err)
	}
	if len(bodies) != 2 || !strings.Contains(bodies[1], `"tool_use_id":"toolu_01"`) || !strings.Contains(bodies[1], "42") {
		t.Fatalf("requests: %v", bodies)
	}
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	for _, f := range append(logs, stdout, stderr) {
		text := f
		if strings.HasSuffix(f, ".jsonl") {
			b, _ := readAll(f)
			text = b
		}
		if strings.Contains(text, key) {
			t.Fatal("the API key appears in the output or the audit log")
		}
	}
}

func readAll(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
