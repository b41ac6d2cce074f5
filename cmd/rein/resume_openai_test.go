package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/audit"
)

// A session interrupted during a call, resumed, and interrupted again
// while that call ran a second time, is resumed against an
// OpenAI-compatible server: the call is in the conversation once (the
// server refuses a repeated tool-call id with 400, as OpenAI's does), it
// runs, and the tool-call count is one.
func TestResumeAfterARerunWithOpenAI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(fakeChatCompletions))
	defer srv.Close()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1/")
	auditDir := filepath.Join(dir, "audit")
	if code, _, stderr := runRein(t, "", "run", "--model", "openai:gpt-4o-mini", "--tools", "calc", "--workdir", workIn(t, dir),
		"--audit-dir", auditDir, "What is 2+3?"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	log := logs[0]
	session := strings.TrimSuffix(filepath.Base(log), ".jsonl")
	// Killed inside calc; then a resume ran it again and was killed inside it too.
	cutAfter(t, log, audit.Intent, 1)
	recs := records(t, log)
	verdict, intent := recs[len(recs)-2], recs[len(recs)-1]
	w, _, err := audit.Append(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []audit.Record{
		{Type: audit.Resume, Reason: "run again: calc", Steps: 1, ToolCalls: 1},
		{Type: verdict.Type, Step: verdict.Step, CallID: verdict.CallID, Tool: verdict.Tool, Args: verdict.Args, Decision: verdict.Decision, Gate: verdict.Gate, Reason: verdict.Reason},
		{Type: intent.Type, Step: intent.Step, CallID: intent.CallID, Tool: intent.Tool, Args: intent.Args, Effect: intent.Effect},
	} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()

	code, stdout, stderr := runRein(t, "", "resume", session, "--audit-dir", auditDir, "--json")
	if code != 0 || !strings.Contains(stdout, `"answer":"The answer is 5."`) {
		t.Fatalf("resume: exit %d:\n%s\n%s", code, stdout, stderr)
	}
	after := records(t, log)
	last := after[len(after)-1]
	if last.Type != audit.Stop || last.ToolCalls != 1 {
		t.Fatalf("stop record %+v: want one tool call", last)
	}
	data, _ := os.ReadFile(log)
	if rep, err := audit.Verify(bytes.NewReader(data)); err != nil || !rep.Intact() || !rep.Complete {
		t.Fatalf("%+v %v", rep, err)
	}
}

// A conversation held with a local OpenAI-compatible server goes on with
// that server when it is resumed, even where the environment now names
// another: what it read is never sent elsewhere silently.
func TestChatResumeKeepsItsServer(t *testing.T) {
	var ownHits, otherHits atomic.Int32
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ownHits.Add(1)
		fakeChatCompletions(w, r)
	}))
	defer own.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		http.Error(w, `{"error":{"message":"wrong server","type":"invalid_request_error"}}`, http.StatusBadRequest)
	}))
	defer other.Close()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	auditDir := filepath.Join(dir, "audit")
	if code, _, stderr := runRein(t, "What is 2+3?\n", "chat", "--model", "openai:gpt-4o-mini", "--base-url", own.URL+"/v1/", "--tools", "calc",
		"--workdir", workIn(t, dir), "--audit-dir", auditDir); code != 0 {
		t.Fatalf("chat: exit %d: %s", code, stderr)
	}
	before := ownHits.Load()
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	if len(logs) != 1 || before == 0 {
		t.Fatalf("logs %v, %d requests", logs, before)
	}
	t.Setenv("OPENAI_BASE_URL", other.URL+"/v1/")
	_, stdout, stderr := runRein(t, "And again?\n", "chat", "--resume", logs[0])
	if ownHits.Load() == before || otherHits.Load() != 0 {
		t.Fatalf("the resumed conversation asked its own server %d times and another %d times:\n%s\n%s", ownHits.Load()-before, otherHits.Load(), stdout, stderr)
	}
	if !strings.Contains(stdout, "as it ran: model openai:gpt-4o-mini, base URL "+own.URL+"/v1/, tools calc") {
		t.Errorf("the resumed chat does not say what it took from the session:\n%s", stdout)
	}
}
