package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
)

// TestStateDirGoneStopsTheRun: the state directory is deleted, or the
// audit log or the rollback journal renamed away and replaced, while a
// command runs. The next call is not made — a change without its record and
// its snapshot would be lost — and the run stops with error (exit 1) and
// says which file went, instead of ending done over unlinked files.
func TestStateDirGoneStopsTheRun(t *testing.T) {
	backend := "landlock"
	if _, err := sandbox.LandlockStatus(); err != nil {
		backend = "none"
	}
	tests := []struct {
		name string
		do   func(t *testing.T, state string)
		why  string
	}{{
		name: "rm -rf the state dir",
		do:   func(t *testing.T, state string) { must(t, os.RemoveAll(filepath.Join(state, "rein"))) },
		why:  `audit log: .*/rein/audit/.*\.jsonl was deleted`,
	}, {
		name: "the audit log renamed away and replaced",
		do: func(t *testing.T, state string) {
			logs, _ := filepath.Glob(filepath.Join(state, "rein", "audit", "*.jsonl"))
			if len(logs) != 1 {
				t.Fatalf("logs: %v", logs)
			}
			must(t, os.Rename(logs[0], logs[0]+".old"))
			must(t, os.WriteFile(logs[0], nil, 0o600))
		},
		why: `audit log: .*\.jsonl was replaced by another file`,
	}, {
		name: "the rollback store deleted",
		do:   func(t *testing.T, state string) { must(t, os.RemoveAll(filepath.Join(state, "rein", "rollback"))) },
		why:  `rollback journal: .*/rein/rollback/.*/journal.jsonl was deleted`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			state := filepath.Join(dir, "state")
			t.Setenv("XDG_STATE_HOME", state)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
			unstaged(t, filepath.Join(dir, "config"))
			work := filepath.Join(dir, "work")
			writeFile(t, filepath.Join(work, "a.txt"), "original\n")
			script := filepath.Join(dir, "s.json")
			writeFile(t, script, `{"turns":[
			 {"text":"w","calls":[{"tool":"write_file","args":{"path":"a.txt","content":"changed\n"}}]},
			 {"text":"c","calls":[{"tool":"run_bash","args":{"command":"touch started && while [ ! -e go ]; do sleep 0.01; done"}}]},
			 {"text":"n","calls":[{"tool":"write_file","args":{"path":"b.txt","content":"never\n"}}]},
			 {"text":"done"}]}`)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan struct{})
			go func() {
				defer close(done)
				for ctx.Err() == nil {
					if _, err := os.Stat(filepath.Join(work, "started")); err == nil {
						tt.do(t, state)
						must(t, os.WriteFile(filepath.Join(work, "go"), nil, 0o600))
						return
					}
					time.Sleep(time.Millisecond)
				}
			}()
			var out, errOut bytes.Buffer
			code := run(ctx, []string{"run", "--model", "scripted:" + script, "--workdir", work, "--mode", "bypass", "--sandbox", backend,
				"--tools", "write_file,run_bash", "--json", "Change things."}, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut})
			cancel()
			<-done
			if code != exitError {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, exitError, out.String(), errOut.String())
			}
			lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
			var final struct{ Stop, Error string }
			must(t, json.Unmarshal(lines[len(lines)-1], &final))
			if final.Stop != "error" || !matches(final.Error, tt.why) {
				t.Errorf("final: stop %q, error %q; want error matching %q", final.Stop, final.Error, tt.why)
			}
			if _, err := os.Stat(filepath.Join(work, "b.txt")); err == nil {
				t.Error("the call after the state dir went was made")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func matches(s, pattern string) bool { return regexp.MustCompile(pattern).MatchString(s) }

// TestFullRollbackStore: the rollback store fills up during a session (a
// real tmpfs of 256 KiB under the state dir). The calls it cannot save for
// are refused — their files untouched — and the session, though it ends
// done, says how many at the end and exits 1: a change rein could not make
// undoable is rein's failure, not a limit the user set (3).
func TestFullRollbackStore(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	store := filepath.Join(state, "rein", "rollback")
	must(t, os.MkdirAll(store, 0o700))
	err := syscall.Mount("tmpfs", store, "tmpfs", 0, "size=256k,mode=0700")
	testenv.Need(t, "tmpfs", err) // needs root (CAP_SYS_ADMIN)
	t.Cleanup(func() { _ = syscall.Unmount(store, syscall.MNT_DETACH) })
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	work := filepath.Join(dir, "work")
	big := strings.Repeat("a line of the user's data\n", 4000) // 104 KB: two fit
	var calls []string
	for i := range 5 {
		writeFile(t, filepath.Join(work, fmt.Sprintf("f%d.txt", i)), big)
		calls = append(calls, fmt.Sprintf(`{"text":"w%d","calls":[{"tool":"write_file","args":{"path":"f%d.txt","content":"replaced\n"}}]}`, i, i))
	}
	script := filepath.Join(dir, "s.json")
	writeFile(t, script, `{"turns":[`+strings.Join(calls, ",")+`,{"text":"done"}]}`)
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"run", "--model", "scripted:" + script, "--workdir", work, "--mode", "accept-edits",
		"--tools", "write_file", "--audit-dir", filepath.Join(dir, "audit"), "Replace the files."}, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut})
	if code != exitError {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitError, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "STOP: done") {
		t.Errorf("the session should still end done:\n%s", out.String())
	}
	refused := 0
	for i := range 5 {
		data, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("f%d.txt", i)))
		must(t, err)
		if string(data) == big {
			refused++
		}
	}
	if refused == 0 || refused == 5 {
		t.Fatalf("%d of 5 calls refused; the store should have taken some and refused the rest", refused)
	}
	want := fmt.Sprintf("rollback: %d change(s) could not be saved for rollback and were refused: the store in %s could not be written (full or read-only?)", refused, store)
	if !strings.Contains(out.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, out.String())
	}
	// What was saved still rolls back.
	var rbOut, rbErr bytes.Buffer
	logs, _ := filepath.Glob(filepath.Join(dir, "audit", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	if code := run(t.Context(), []string{"rollback", logs[0]}, env{stdin: strings.NewReader(""), stdout: &rbOut, stderr: &rbErr}); code != exitOK {
		t.Fatalf("rollback: exit %d\n%s\n%s", code, rbOut.String(), rbErr.String())
	}
	for i := range 5 {
		if data, _ := os.ReadFile(filepath.Join(work, fmt.Sprintf("f%d.txt", i))); string(data) != big {
			t.Errorf("f%d.txt not restored", i)
		}
	}
}
