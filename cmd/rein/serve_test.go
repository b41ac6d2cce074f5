package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeApprovesACLIRun starts rein serve, runs rein run --approvals
// against it, approves the run's question through the API, and creates a
// session through the API: both are built as rein run builds them.
func TestServeApprovesACLIRun(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	const token = "cli-test-token-0123456789"
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "w")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"writing","calls":[{"tool":"write_file","args":{"path":"out.txt","content":"approved\n"}}]},{"text":"done"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	served := make(chan int, 1)
	go func() {
		served <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--token-file", tokenFile,
			"--state-dir", filepath.Join(dir, "serve"), "--audit-dir", filepath.Join(dir, "audit")},
			env{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard})
		pw.Close()
	}()
	first, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("rein serve printed no address: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	base := strings.TrimSpace(first)
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("first line %q is not the address", first)
	}
	call := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	ran := make(chan int, 1)
	var out strings.Builder
	go func() {
		ran <- run(t.Context(), []string{"run", "--workdir", work, "--model", "scripted:" + script, "--audit-dir", filepath.Join(dir, "cli-audit"),
			"--approvals", base, "--approvals-token-file", tokenFile, "--approval-timeout", "30s", "Write out.txt"},
			env{stdin: strings.NewReader(""), stdout: &out, stderr: io.Discard})
	}()
	var pending struct {
		Approvals []struct{ ID, Tool, Token, Task string }
	}
	for deadline := time.Now().Add(30 * time.Second); len(pending.Approvals) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the CLI run's question never reached the queue")
		}
		_, body := call("GET", "/v1/approvals", "")
		_ = json.Unmarshal([]byte(body), &pending)
	}
	a := pending.Approvals[0]
	if a.Tool != "write_file" || a.Task != "Write out.txt" {
		t.Errorf("approval %+v", a)
	}
	if code, body := call("POST", "/v1/approvals/"+a.ID, fmt.Sprintf(`{"token":%q,"decision":"approve"}`, a.Token)); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	if code := <-ran; code != exitOK {
		t.Fatalf("rein run exited %d:\n%s", code, out.String())
	}
	if b, err := os.ReadFile(filepath.Join(work, "out.txt")); err != nil || string(b) != "approved\n" {
		t.Errorf("out.txt: %q %v", b, err)
	}

	// The same session, gone on with as a conversation: its questions
	// reach the queue under its own id, not a new one.
	logs, _ := filepath.Glob(filepath.Join(dir, "cli-audit", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	session := strings.TrimSuffix(filepath.Base(logs[0]), ".jsonl")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"writing","calls":[{"tool":"write_file","args":{"path":"out.txt","content":"approved\n"}}]},{"text":"done"},
		{"text":"again","calls":[{"tool":"write_file","args":{"path":"more.txt","content":"more\n"}}]},{"text":"done again"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		ran <- run(t.Context(), []string{"chat", "--resume", session, "--audit-dir", filepath.Join(dir, "cli-audit"),
			"--approvals", base, "--approvals-token-file", tokenFile, "--approval-timeout", "30s"},
			env{stdin: strings.NewReader("Write more.txt\n"), stdout: io.Discard, stderr: io.Discard})
	}()
	var again struct {
		Approvals []struct{ ID, Tool, Token, Session string }
	}
	for deadline := time.Now().Add(30 * time.Second); len(again.Approvals) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the resumed conversation's question never reached the queue")
		}
		_, body := call("GET", "/v1/approvals", "")
		_ = json.Unmarshal([]byte(body), &again)
	}
	if a := again.Approvals[0]; a.Session != session {
		t.Errorf("the resumed conversation asks as session %q, want %q", a.Session, session)
	} else if code, body := call("POST", "/v1/approvals/"+a.ID, fmt.Sprintf(`{"token":%q,"decision":"approve"}`, a.Token)); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	if code := <-ran; code != exitOK {
		t.Fatalf("rein chat --resume exited %d", code)
	}
	if b, err := os.ReadFile(filepath.Join(work, "more.txt")); err != nil || string(b) != "more\n" {
		t.Errorf("more.txt: %q %v", b, err)
	}

	// A session created through the API, with a limit.
	body, _ := json.Marshal(map[string]any{"task": "Say done", "model": "scripted:" + script, "workdir": work, "mode": "plan", "limits": map[string]any{"max_steps": 5}})
	code, created := call("POST", "/v1/sessions", string(body))
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, created)
	}
	var c struct{ ID string }
	_ = json.Unmarshal([]byte(created), &c)
	var info struct {
		State string
		Stop  *struct{ Reason string }
	}
	for deadline := time.Now().Add(30 * time.Second); info.Stop == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the API session did not end")
		}
		_, b := call("GET", "/v1/sessions/"+c.ID, "")
		_ = json.Unmarshal([]byte(b), &info)
	}
	if info.Stop.Reason != "done" {
		t.Errorf("API session: %+v", info)
	}
	// In plan mode the write was refused by the session's own gates.
	_, log := call("GET", "/v1/sessions/"+c.ID+"/audit", "")
	if !strings.Contains(log, `"decision":"deny"`) {
		t.Errorf("plan mode did not refuse the write:\n%s", log)
	}
	for _, bad := range []string{`{"task":"x","workdir":"relative"}`, `{"task":"x","workdir":"/","mode":"yolo"}`, `{"task":"x","workdir":"/","limits":{"max_steps":0}}`} {
		if code, b := call("POST", "/v1/sessions", bad); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", bad, code, b)
		}
	}
	cancel()
	select {
	case code := <-served:
		if code != exitOK {
			t.Errorf("rein serve exited %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("rein serve did not stop")
	}
}

func TestServeRefusesAnOpenAddressWithoutTLS(t *testing.T) {
	var stderr strings.Builder
	code := run(t.Context(), []string{"serve", "--listen", "0.0.0.0:0", "--state-dir", t.TempDir()}, env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr})
	if code != exitUsage || !strings.Contains(stderr.String(), "TLS") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}
