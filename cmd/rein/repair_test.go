package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reinhq/rein/audit"
)

// rein audit repair drops the cut last record of a log, after saying what
// it drops, keeping a copy; resume points at it; other damage is refused
// and points at verify.
func TestAuditRepair(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	work := filepath.Join(dir, "work")
	writeFile(t, filepath.Join(work, "a.txt"), "one\n")
	script := filepath.Join(dir, "s.json")
	big := strings.Repeat("x", 5000)
	writeFile(t, script, `{"turns":[
	 {"text":"first","calls":[{"tool":"write_file","args":{"path":"a.txt","content":"`+big+`"}}]},
	 {"text":"written"}]}`)
	auditDir := filepath.Join(dir, "audit")
	if code, _, stderr := runRein(t, "", "run", "--model", "scripted:"+script, "--workdir", work, "--mode", "accept-edits",
		"--tools", "write_file", "--audit-dir", auditDir, "Write."); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	log := logs[0]
	session := strings.TrimSuffix(filepath.Base(log), ".jsonl")
	// Killed in the middle of writing the intent, a record over 4 KiB.
	cutAfter(t, log, audit.Intent, 1)
	data, _ := os.ReadFile(log)
	start := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	whole := data[:start]
	recs := records(t, log)[:3]
	if len(data)-start < 4096 {
		t.Fatalf("the intent has only %d bytes", len(data)-start)
	}
	cut := data[:start+3000]
	if err := os.WriteFile(log, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(work, "a.txt"), []byte("one\n"), 0o644)

	code, _, stderr := runRein(t, "", "resume", session, "--audit-dir", auditDir)
	if code != exitError || !strings.Contains(stderr, "ends in a cut record") || !strings.Contains(stderr, "rein audit repair "+log) {
		t.Fatalf("resume of a cut log: exit %d: %s", code, stderr)
	}
	code, stdout, _ := runRein(t, "", "audit", "repair", "--dry-run", log)
	if code != 0 || !strings.Contains(stdout, "3000 bytes at offset") || !strings.Contains(stdout, "nothing changed") {
		t.Fatalf("dry run: exit %d: %s", code, stdout)
	}
	if got, _ := os.ReadFile(log); !bytes.Equal(got, cut) {
		t.Fatal("--dry-run changed the log")
	}
	code, stdout, stderr = runRein(t, "", "audit", "repair", log)
	if code != 0 || !regexp.MustCompile(`cut record: 3000 bytes at offset \d+, starting "\{\\"seq\\":4,`).MatchString(stdout) ||
		!strings.Contains(stdout, "kept in "+log+".cut-") {
		t.Fatalf("repair: exit %d: %s %s", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(log); !bytes.Equal(got, whole) {
		t.Fatal("the repaired log is not the log up to its last whole record")
	}
	copies, _ := filepath.Glob(log + ".cut-*")
	if kept, _ := os.ReadFile(copies[0]); len(copies) != 1 || !bytes.Equal(kept, cut) {
		t.Fatalf("copies %v", copies)
	}
	if code, stdout, _ := runRein(t, "", "audit", "repair", log); code != 0 || !strings.Contains(stdout, "intact, nothing to repair") {
		t.Fatalf("second repair: exit %d %s", code, stdout)
	}
	// The session goes on from its last whole record: the write is asked for again.
	if code, _, stderr := runRein(t, "", "resume", session, "--audit-dir", auditDir); code != 0 {
		t.Fatalf("resume after repair: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != big {
		t.Fatalf("a.txt has %d bytes", len(b))
	}
	if f, _ := os.Open(log); f != nil {
		rep, err := audit.Verify(f)
		f.Close()
		if err != nil || !rep.Intact() || !rep.Complete || rep.Records <= len(recs) {
			t.Fatalf("%+v %v", rep, err)
		}
	}

	// Any other damage: refused, pointing at verify, the log untouched.
	edited := bytes.Replace(whole, []byte(`"Write."`), []byte(`"Erase."`), 1)
	if err := os.WriteFile(log, append(edited, `{"seq":`...), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runRein(t, "", "audit", "repair", log)
	if code != exitError || !strings.Contains(stderr, ": prev is not the SHA-256 of line 1") || !strings.Contains(stderr, "rein audit verify") {
		t.Fatalf("repair of an edited log: exit %d: %s", code, stderr)
	}
}
