package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// Whatever kills rein, nothing a command started outlives it: rein run,
// SIGKILLed while a command's setsid'd and backgrounded children wait to
// write, leaves no writer behind, with the local executor (--sandbox none,
// each command under rein's reaper) and with landlock where it works.
func TestRunKilledLeavesNoProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	backends := []string{"none"}
	if _, err := sandbox.LandlockStatus(); err == nil {
		backends = append(backends, "landlock")
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			work := workIn(t, dir)
			script := filepath.Join(dir, "s.json")
			writeFile(t, script, `{"turns":[{"text":"go","calls":[{"tool":"run_bash","args":{"command":`+
				`"setsid sh -c 'sleep 2; echo x > leak1' >/dev/null 2>&1 & (sleep 2; echo x > leak2) >/dev/null 2>&1 & nohup sh -c 'sleep 2; echo x > leak3' >/dev/null 2>&1 & echo up > started; sleep 30"}}]},{"text":"done"}]}`)
			cmd := exec.Command(exe, "run", "--model", "scripted:"+script, "--workdir", work, "--mode", "bypass", "--tools", "run_bash",
				"--sandbox", backend, "--audit-dir", filepath.Join(dir, "audit"), "Go.")
			cmd.Env = append(os.Environ(), "REIN_TEST_MAIN=1", "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
			unstaged(t, filepath.Join(dir, "config"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(filepath.Join(work, "started")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
					t.Fatalf("the command never started: %s", stderr.String())
				}
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			time.Sleep(4 * time.Second) // the writers would have written after 2 s
			for _, f := range []string{"leak1", "leak2", "leak3"} {
				if _, err := os.Stat(filepath.Join(work, f)); err == nil {
					t.Errorf("%s: a process the command started outlived rein and wrote %s", backend, f)
				}
			}
		})
	}
}
