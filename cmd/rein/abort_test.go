package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A run whose context is cancelled (what SIGINT and SIGTERM do in main)
// stops as aborted, exits 130 and still records its stop.
func TestAbortedRunExits130(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "s.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"x","calls":[{"tool":"calc","args":{"expression":"1"}}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"run", "--model", "scripted:" + script, "--workdir", dir, "--audit-dir", filepath.Join(dir, "audit"), "--json", "task"},
		env{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errOut})
	if code != exitAborted {
		t.Fatalf("exit %d, want %d (stderr %q)", code, exitAborted, errOut.String())
	}
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	var final struct{ Stop, Audit string }
	if err := json.Unmarshal(lines[len(lines)-1], &final); err != nil || final.Stop != "aborted" {
		t.Fatalf("final %s (%v)", lines[len(lines)-1], err)
	}
	log, err := os.ReadFile(final.Audit)
	if err != nil || !bytes.Contains(log, []byte(`"stop":"aborted"`)) {
		t.Fatalf("audit log without the abort: %v", err)
	}
}
