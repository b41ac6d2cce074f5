package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/session/rollback"
)

// crashScript writes and edits files, one call per step: the session the
// crash test kills.
func crashScript(t *testing.T, dir string) string {
	t.Helper()
	type call struct {
		Tool string         `json:"tool"`
		Args map[string]any `json:"args"`
	}
	type turn struct {
		Text  string `json:"text"`
		Calls []call `json:"calls,omitempty"`
	}
	var turns []turn
	for i := range 12 {
		var c call
		switch i % 4 {
		case 0:
			c = call{"write_file", map[string]any{"path": fmt.Sprintf("new/f%d.txt", i), "content": strings.Repeat(fmt.Sprintf("line %d\n", i), 50)}}
		case 1:
			c = call{"edit_file", map[string]any{"path": "keep.txt", "old_string": "v", "new_string": "vv", "replace_all": true}}
		case 2:
			c = call{"write_file", map[string]any{"path": "notes.md", "content": fmt.Sprintf("# rewritten %d\n", i)}}
		case 3:
			c = call{"write_file", map[string]any{"path": "bin.dat", "content": fmt.Sprintf("binary-ish %d \x01\x02", i)}}
		}
		turns = append(turns, turn{Text: fmt.Sprintf("step %d", i+1), Calls: []call{c}})
	}
	turns = append(turns, turn{Text: "done"})
	b, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "crash.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The crash test of the stop-and-undo issue: rein is killed with SIGKILL at
// random points of a session that writes files, many times. After every
// kill the audit log verifies to its last line, and rollback restores every
// touched file byte for byte (and removes the files the agent created).
func TestCrashKillAndRollback(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test runs rein 100 times; skipped in -short")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	script := crashScript(t, base)
	original := map[string]string{
		"keep.txt": "v1 v2 v3\n",
		"notes.md": "# notes\nkeep me\n",
		"bin.dat":  "\x00\x01\x02 original",
	}
	runs := 100
	// Calibrate: how long does an unkilled run take here?
	took := time.Second
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range runs + 1 {
		work := filepath.Join(base, fmt.Sprintf("w%d", i))
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range original {
			if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		state := filepath.Join(base, fmt.Sprintf("s%d", i))
		cmd := exec.Command(exe, "run", "--model", "scripted:"+script, "--workdir", work, "--mode", "accept-edits",
			"--tools", "write_file,edit_file", "--audit-dir", filepath.Join(state, "audit"), "Rewrite the files.")
		cmd.Env = append(os.Environ(), "REIN_TEST_MAIN=1", "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+filepath.Join(state, "config"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killed := false
		if i == 0 {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("the calibration run failed: %v\n%s", err, stderr.String())
			}
			took = time.Since(start)
		} else {
			delay := time.Duration(rng.Int64N(int64(took) * 12 / 10))
			timer := time.AfterFunc(delay, func() { _ = cmd.Process.Kill() })
			err := cmd.Wait()
			killed = !timer.Stop() || err != nil
		}
		logs, _ := filepath.Glob(filepath.Join(state, "audit", "*.jsonl"))
		if len(logs) == 0 {
			continue // killed before the log existed: nothing ran
		}
		if st, err := os.Stat(logs[0]); err == nil && st.Size() == 0 {
			continue // killed between creating the log and its first record: nothing ran
		}
		f, err := os.Open(logs[0])
		if err != nil {
			t.Fatal(err)
		}
		rep, err := audit.Verify(f)
		f.Close()
		if err != nil || rep.FirstBad != 0 {
			t.Fatalf("run %d (killed=%v): the log does not verify: %+v %v", i, killed, rep, err)
		}
		session := strings.TrimSuffix(filepath.Base(logs[0]), ".jsonl")
		reports, err := rollback.Restore(filepath.Join(state, "rein", "rollback"), session)
		if err != nil && !errors.Is(err, rollback.ErrUnknownSession) {
			t.Fatalf("run %d: rollback: %v", i, err)
		}
		for _, r := range reports {
			if r.Err != "" {
				t.Fatalf("run %d: rollback of %s failed: %s", i, r.Path, r.Err)
			}
		}
		// Byte for byte: the originals are back, and nothing else is there.
		for name, content := range original {
			got, err := os.ReadFile(filepath.Join(work, name))
			if err != nil || string(got) != content {
				t.Fatalf("run %d: %s is %q after rollback (%v), want %q", i, name, got, err, content)
			}
		}
		leftovers, _ := filepath.Glob(filepath.Join(work, "new", "*"))
		if len(leftovers) > 0 {
			t.Fatalf("run %d: files the agent created survived the rollback: %v", i, leftovers)
		}
	}
	t.Logf("%d runs killed at random points within %v; every log verified, every rollback exact", runs, took*12/10)
}
