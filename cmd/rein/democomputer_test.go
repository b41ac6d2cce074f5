package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/audit"
)

// TestComputerDemoBrowserDies: Chromium dying while it starts (a fake one
// on PATH that exits 1) leaves a log with a start and a stop saying why,
// which verifies, and an error that says the browser died.
func TestComputerDemoBrowserDies(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "chromium"), []byte("#!/bin/sh\necho 'crashed on start' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	auditDir := filepath.Join(dir, "audit")
	cmd := exec.Command(exe, "demo", "computer-buy", "--audit-dir", auditDir)
	cmd.Env = append(os.Environ(), "REIN_TEST_MAIN=1", "PATH="+bin+":"+os.Getenv("PATH"), "HOME="+dir,
		"XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("the demo succeeded with a browser that cannot start")
	}
	for _, s := range []string{"the browser (chromium) died during start-up", "exit status 1", "crashed on start"} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("stderr does not say %q:\n%s", s, stderr.String())
		}
	}
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("logs: %v", logs)
	}
	f, err := os.Open(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if err != nil || !rep.Intact() || !rep.Complete || rep.Records != 2 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
	data, _ := os.ReadFile(logs[0])
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var start, stop audit.Record
	if json.Unmarshal([]byte(lines[0]), &start) != nil || json.Unmarshal([]byte(lines[len(lines)-1]), &stop) != nil {
		t.Fatalf("log:\n%s", data)
	}
	if start.Type != audit.SessionStart || stop.Type != audit.Stop || stop.Stop != "error" ||
		!strings.Contains(stop.Error, "the browser (chromium) died during start-up") {
		t.Errorf("start %+v\nstop %+v", start, stop)
	}
}
