package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestServeExportsTraces: rein serve --otlp-endpoint exports each hosted
// session's spans to an OTLP/HTTP receiver; the session's id is the
// spans' gen_ai.conversation.id, and a refused call's span says which gate
// refused it. Stopping the server sends what is queued.
func TestServeExportsTraces(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var mu sync.Mutex
	spans := map[string]map[string]string{} // name → attributes (the last span of that name)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					a := map[string]string{}
					for _, kv := range s.Attributes {
						v := kv.GetValue()
						a[kv.Key] = v.GetStringValue()
						if v.GetStringValue() == "" {
							a[kv.Key] = v.String()
						}
					}
					spans[s.Name] = a
				}
			}
		}
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	defer receiver.Close()

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	const token = "trace-test-token-0123456789"
	work := filepath.Join(dir, "w")
	script := filepath.Join(dir, "script.json")
	for path, data := range map[string]string{
		tokenFile: token + "\n",
		script:    `{"turns":[{"text":"writing","calls":[{"tool":"write_file","args":{"path":"out.txt","content":"x"}}]},{"text":"done"}]}`,
	} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	served := make(chan int, 1)
	go func() {
		served <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--token-file", tokenFile,
			"--state-dir", filepath.Join(dir, "serve"), "--audit-dir", filepath.Join(dir, "audit"),
			"--otlp-endpoint", receiver.URL + "/v1/traces"},
			env{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard})
		pw.Close()
	}()
	first, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("rein serve printed no address: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	base := strings.TrimSpace(first)
	call := func(method, path, body string) string {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	body, _ := json.Marshal(map[string]any{"task": "Write out.txt", "model": "scripted:" + script, "workdir": work, "mode": "plan"})
	var c struct{ ID string }
	_ = json.Unmarshal([]byte(call("POST", "/v1/sessions", string(body))), &c)
	if c.ID == "" {
		t.Fatal("no session created")
	}
	var info struct{ Stop *struct{ Reason string } }
	for deadline := time.Now().Add(30 * time.Second); info.Stop == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the session did not end")
		}
		_ = json.Unmarshal([]byte(call("GET", "/v1/sessions/"+c.ID, "")), &info)
	}
	cancel()
	if code := <-served; code != exitOK {
		t.Fatalf("rein serve exited %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	root, tool := spans["invoke_agent rein"], spans["execute_tool write_file"]
	if root == nil || tool == nil || spans["chat "+script] == nil {
		t.Fatalf("spans received: %v", spans)
	}
	if root["gen_ai.conversation.id"] != c.ID || root["rein.stop.reason"] != "done" {
		t.Errorf("session span %v", root)
	}
	if tool["rein.verdict"] != "deny" || tool["rein.gate"] == "" || tool["gen_ai.tool.call.id"] == "" {
		t.Errorf("write_file span %v", tool)
	}
}
