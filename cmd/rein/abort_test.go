package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
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
	code := run(ctx, []string{"run", "--model", "scripted:" + script, "--workdir", workIn(t, dir), "--audit-dir", filepath.Join(dir, "audit"), "--json", "task"},
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

// abortRun starts rein as a subprocess on a session whose only call is a
// 30-second sleep, waits until the sleep runs, sends sig, and returns how
// long the sleep survived the signal, and rein's exit code and stderr.
func abortRun(tb testing.TB, dir string, sig os.Signal, twice bool) (time.Duration, int, string) {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	work := tb.TempDir()
	script := filepath.Join(dir, "sleep.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"wait","calls":[{"tool":"run_bash","args":{"command":"echo $$ > sleep.pid.tmp && mv sleep.pid.tmp sleep.pid && exec sleep 30"}}]},{"text":"done"}]}`), 0o600); err != nil {
		tb.Fatal(err)
	}
	backend := "landlock" // the default where it works; the local executor elsewhere
	if _, err := sandbox.LandlockStatus(); err != nil {
		backend = "none"
	}
	cmd := exec.Command(exe, "run", "--model", "scripted:"+script, "--workdir", work, "--mode", "bypass", "--tools", "run_bash",
		"--sandbox", backend, "--durability", "flush", "--audit-dir", filepath.Join(dir, "audit"), "Wait.")
	cmd.Env = append(os.Environ(), "REIN_TEST_MAIN=1", "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	unstaged(tb, filepath.Join(dir, "config"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var pid int
	for deadline := time.Now().Add(20 * time.Second); pid == 0; {
		if b, err := os.ReadFile(filepath.Join(work, "sleep.pid")); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the sleep never started: %s", stderr.String())
		}
		time.Sleep(time.Millisecond)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		tb.Fatal(err)
	}
	if twice {
		_ = cmd.Process.Signal(sig)
	}
	for syscall.Kill(pid, 0) == nil {
		if time.Since(sent) > 20*time.Second {
			tb.Fatalf("the sleep (pid %d) outlived the signal by 20 s", pid)
		}
		time.Sleep(50 * time.Microsecond)
	}
	gone := time.Since(sent)
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return gone, code, stderr.String()
}

// SIGINT, SIGTERM and SIGHUP abort the session: the tool in flight is killed, rein
// exits 130, and the log has the abort. A second signal exits at once.
func TestSignalAbortsTheToolInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rein as a subprocess")
	}
	for _, c := range []struct {
		sig   os.Signal
		twice bool
	}{{os.Interrupt, false}, {syscall.SIGTERM, false}, {syscall.SIGHUP, false}, {os.Interrupt, true}} {
		dir := t.TempDir()
		_, code, stderr := abortRun(t, dir, c.sig, c.twice)
		if code != exitAborted {
			t.Fatalf("%v (twice %v): exit %d, want 130\n%s", c.sig, c.twice, code, stderr)
		}
		if c.twice {
			continue // exited at once: the log may end anywhere
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "audit", "*.jsonl"))
		if len(logs) != 1 {
			t.Fatalf("logs %v", logs)
		}
		data, _ := os.ReadFile(logs[0])
		if !bytes.Contains(data, []byte(`"type":"abort"`)) || !bytes.Contains(data, []byte(`"tool":"run_bash"`)) || !bytes.Contains(data, []byte(`"stop":"aborted"`)) {
			t.Fatalf("the log lacks the abort of run_bash:\n%s", data)
		}
	}
}

// BenchmarkAbortSignal is the measurement: from the signal to the
// in-flight child process gone, through rein itself.
//
//	go test -run '^$' -bench AbortSignal -benchtime 50x ./cmd/rein
func BenchmarkAbortSignal(b *testing.B) {
	var took []time.Duration
	for b.Loop() {
		d, code, stderr := abortRun(b, b.TempDir(), os.Interrupt, false)
		if code != exitAborted {
			b.Fatalf("exit %d\n%s", code, stderr)
		}
		took = append(took, d)
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
}

// --rollback-on-abort undoes the aborted session's file changes unasked;
// without it, and with no terminal, they are kept and rein says how to undo.
func TestRollbackOnAbort(t *testing.T) {
	backend := "landlock"
	if _, err := sandbox.LandlockStatus(); err != nil {
		backend = "none"
	}
	for _, unasked := range []bool{true, false} {
		dir := t.TempDir()
		t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
		unstaged(t, filepath.Join(dir, "config"))
		work := filepath.Join(dir, "work")
		writeFile(t, filepath.Join(work, "a.txt"), "original\n")
		script := filepath.Join(dir, "s.json")
		writeFile(t, script, `{"turns":[
		 {"text":"w","calls":[{"tool":"write_file","args":{"path":"a.txt","content":"changed\n"}}]},
		 {"text":"n","calls":[{"tool":"write_file","args":{"path":"new.txt","content":"new\n"}}]},
		 {"text":"s","calls":[{"tool":"run_bash","args":{"command":"touch started && exec sleep 30"}}]},
		 {"text":"done"}]}`)
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			for {
				if _, err := os.Stat(filepath.Join(work, "started")); err == nil {
					cancel()
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
		args := []string{"run", "--model", "scripted:" + script, "--workdir", work, "--mode", "bypass", "--sandbox", backend,
			"--tools", "write_file,run_bash", "--audit-dir", filepath.Join(dir, "audit"), "Change things."}
		if unasked {
			args = append(args[:1], append([]string{"--rollback-on-abort"}, args[1:]...)...)
		}
		var out, errOut bytes.Buffer
		code := run(ctx, args, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut})
		cancel()
		if code != exitAborted {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		a, _ := os.ReadFile(filepath.Join(work, "a.txt"))
		_, newErr := os.Stat(filepath.Join(work, "new.txt"))
		switch {
		case unasked && (string(a) != "original\n" || newErr == nil):
			t.Fatalf("--rollback-on-abort: a.txt %q, new.txt kept: %v\n%s", a, newErr == nil, errOut.String())
		case !unasked && (string(a) != "changed\n" || newErr != nil || !strings.Contains(out.String(), "undo with: rein rollback")):
			t.Fatalf("without the flag the changes must stay and rein must say how to undo them: a.txt %q\n%s", a, out.String())
		}
	}
}
