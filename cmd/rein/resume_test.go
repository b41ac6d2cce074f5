package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func records(t *testing.T, path string) []audit.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []audit.Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if audit.Padding(sc.Bytes()) {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

// cutAfter keeps the log's lines up to and including the n-th record of
// type typ: what is on disk when rein dies right after writing it.
func cutAfter(t *testing.T, path string, typ audit.Type, n int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []byte
	seen := 0
	for line := range bytes.Lines(data) {
		kept = append(kept, line...)
		var r audit.Record
		if json.Unmarshal(line, &r) != nil {
			continue // padding
		}
		if r.Type == typ {
			if seen++; seen == n {
				break
			}
		}
	}
	if err := os.WriteFile(path, kept, 0o600); err != nil {
		t.Fatal(err)
	}
}

func runRein(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), args, env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut})
	return code, out.String(), errOut.String()
}

// A session that died between an intent and its result is resumed: the
// reversible call runs again under the same idempotency key, the session
// goes on from where it was, and the log stays one verifiable chain.
func TestResumeAfterACrash(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	work := filepath.Join(dir, "work")
	writeFile(t, filepath.Join(work, "a.txt"), "one\n")
	script := filepath.Join(dir, "s.json")
	writeFile(t, script, `{"turns":[
	 {"text":"first","calls":[{"tool":"write_file","args":{"path":"a.txt","content":"two\n"}}]},
	 {"text":"second","calls":[{"tool":"write_file","args":{"path":"b.txt","content":"new\n"}}]},
	 {"text":"third","calls":[{"tool":"edit_file","args":{"path":"a.txt","old_string":"two","new_string":"three"}}]},
	 {"text":"all written"}]}`)
	auditDir := filepath.Join(dir, "audit")
	code, _, stderr := runRein(t, "", "run", "--model", "scripted:"+script, "--workdir", work, "--mode", "accept-edits",
		"--tools", "write_file,edit_file", "--audit-dir", auditDir, "Write.")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	log := logs[0]
	session := strings.TrimSuffix(filepath.Base(log), ".jsonl")
	before := records(t, log)
	// Die right after the second intent: b.txt's write may or may not have happened.
	cutAfter(t, log, audit.Intent, 2)
	_ = os.Remove(filepath.Join(work, "b.txt"))
	writeFile(t, filepath.Join(work, "a.txt"), "two\n")

	code, _, stderr = runRein(t, "", "resume", session, "--audit-dir", auditDir)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "three\n" {
		t.Fatalf("a.txt = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "b.txt")); string(b) != "new\n" {
		t.Fatalf("b.txt = %q", b)
	}
	after := records(t, log)
	var keys []string
	types := []string{}
	for _, r := range after {
		types = append(types, string(r.Type))
		if r.Type == audit.Intent {
			keys = append(keys, r.Key)
		}
	}
	got := strings.Join(types, " ")
	if !strings.Contains(got, "intent resume verdict intent result model_call verdict intent result model_call stop") {
		t.Fatalf("records after resume: %s", got)
	}
	var origKeys []string
	for _, r := range before {
		if r.Type == audit.Intent {
			origKeys = append(origKeys, r.Key)
		}
	}
	if strings.Join(keys, ",") != strings.Join([]string{origKeys[0], origKeys[1], origKeys[1], origKeys[2]}, ",") {
		t.Fatalf("intent keys %v, want the second call again under its own key (%v)", keys, origKeys)
	}
	f, _ := os.Open(log)
	defer f.Close()
	if rep, err := audit.Verify(f); err != nil || rep.FirstBad != 0 || !rep.Complete {
		t.Fatalf("the resumed log does not verify: %+v %v", rep, err)
	}
	// A finished session is not resumed.
	if code, _, stderr := runRein(t, "", "resume", session, "--audit-dir", auditDir); code != exitUsage || !strings.Contains(stderr, "nothing to resume") {
		t.Fatalf("resume of a finished session: exit %d %s", code, stderr)
	}
}

// A session that died during an irreversible call is never resumed without
// a human: without a terminal, rein refuses and writes nothing.
func TestResumeRefusesAnIrreversibleCallInDoubt(t *testing.T) {
	dir := t.TempDir()
	auditDir := filepath.Join(dir, "audit")
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	script := filepath.Join(dir, "s.json")
	writeFile(t, script, `{"turns":[{"text":"mail","calls":[{"tool":"send_email","args":{"to":"ann@example.com","body":"hi"}}]},{"text":"sent"}]}`)
	work := filepath.Join(dir, "work")
	writeFile(t, filepath.Join(work, "x"), "")
	// Write the log of a session that was inside send_email when it died.
	w, err := audit.Create(auditDir, "20261202T120000Z-0badc0de")
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(map[string]any{"model": "scripted:" + script, "meta": map[string]any{"settings": map[string]any{
		"model": "scripted:" + script, "workdir": work, "config": map[string]any{"tools": map[string]any{"allow": []string{"send_email"}, "read_lines": 100}, "permissions": map[string]any{"mode": "default"}}}}})
	args := json.RawMessage(`{"to":"ann@example.com","body":"hi"}`)
	for _, r := range []audit.Record{
		{Type: audit.SessionStart, Task: "Mail Ann.", Config: meta},
		{Type: audit.ModelCall, Step: 1, Text: "mail", Calls: []string{"send_email"}},
		{Type: audit.Verdict, Step: 1, CallID: "call_1_1", Tool: "send_email", Args: args, Decision: audit.DecisionOf(gate.Allow), Gate: "approval"},
		{Type: audit.Intent, Step: 1, CallID: "call_1_1", Tool: "send_email", Args: args, Effect: audit.EffectOf(tool.Irreversible), Key: "k1"},
	} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	size := func() int64 {
		st, _ := os.Stat(audit.FileName(auditDir, "20261202T120000Z-0badc0de"))
		return st.Size()
	}
	was := size()
	code, _, stderr := runRein(t, "", "resume", "20261202T120000Z-0badc0de", "--audit-dir", auditDir)
	if code != exitError || !strings.Contains(stderr, "does not repeat it without a human") || !strings.Contains(stderr, "k1") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if size() != was {
		t.Fatal("the refused resume wrote to the log")
	}
}
