package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
