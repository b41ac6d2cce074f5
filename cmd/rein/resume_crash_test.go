package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/audit"
)

// interruptedSession runs the crash script to its end in a fresh state dir
// and cuts its log after the n-th intent: a session killed inside a call.
func interruptedSession(t *testing.T, base, script string, i, n int) (state, auditDir, session string) {
	t.Helper()
	work := filepath.Join(base, fmt.Sprintf("w%d", i))
	writeFile(t, filepath.Join(work, "keep.txt"), "v1 v2 v3\n")
	writeFile(t, filepath.Join(work, "notes.md"), "# notes\n")
	writeFile(t, filepath.Join(work, "bin.dat"), "x")
	state = filepath.Join(base, fmt.Sprintf("s%d", i))
	auditDir = filepath.Join(state, "audit")
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(state, "config"))
	if code, _, stderr := runRein(t, "", "run", "--model", "scripted:"+script, "--workdir", work, "--mode", "accept-edits",
		"--tools", "write_file,edit_file", "--audit-dir", auditDir, "Rewrite the files."); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	cutAfter(t, logs[0], audit.Intent, n)
	return state, auditDir, strings.TrimSuffix(filepath.Base(logs[0]), ".jsonl")
}

// resumeProcess returns a rein resume of session as a separate process.
func resumeProcess(t *testing.T, state, auditDir, session string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "resume", session, "--audit-dir", auditDir)
	cmd.Env = append(os.Environ(), "REIN_TEST_MAIN=1", "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+filepath.Join(state, "config"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	return cmd, &stderr
}

// checkResumedLog checks a log after resumes: it verifies, it has at most
// one stop record (complete: exactly one), and no call has two results: no
// call ran twice to its end.
func checkResumedLog(t *testing.T, path string, complete bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(bytes.NewReader(data))
	if err != nil || !rep.Intact() || rep.Complete != complete {
		t.Fatalf("the log does not verify (complete %v): %+v %v", complete, rep, err)
	}
	stops := 0
	results := map[string]int{}
	for _, r := range records(t, path) {
		switch r.Type {
		case audit.Stop:
			stops++
		case audit.Result:
			if results[r.CallID]++; results[r.CallID] > 1 {
				t.Fatalf("call %s ran twice: two results", r.CallID)
			}
		}
	}
	if stops > 1 || complete != (stops == 1) {
		t.Fatalf("%d stop records", stops)
	}
}

// hasStop reports whether the log at path has a stop record.
func hasStop(t *testing.T, path string) bool {
	t.Helper()
	for _, r := range records(t, path) {
		if r.Type == audit.Stop {
			return true
		}
	}
	return false
}

// Two rein resume of one session, started at once, many times: one goes
// on, the other says the session is being resumed by the first (pid) and
// exits 1, or, when the first was already done, that there is nothing to
// resume. The log verifies, has one stop record, and no call ran twice.
func TestTwoResumesAtOnce(t *testing.T) {
	base := t.TempDir()
	script := crashScript(t, base)
	busy := regexp.MustCompile(`rein: session \S+ is being resumed by another rein \(pid (\d+)\)`)
	for i := range 8 {
		state, auditDir, session := interruptedSession(t, base, script, i, 1+i%5)
		a, aErr := resumeProcess(t, state, auditDir, session)
		b, bErr := resumeProcess(t, state, auditDir, session)
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		ea, eb := a.Wait(), b.Wait()
		codes := []int{a.ProcessState.ExitCode(), b.ProcessState.ExitCode()}
		errs := []string{aErr.String(), bErr.String()}
		pids := []int{a.Process.Pid, b.Process.Pid}
		winner := 0
		if codes[0] != 0 {
			winner = 1
		}
		loser := 1 - winner
		if codes[winner] != 0 {
			t.Fatalf("round %d: neither resume went on: %v %v\n%s\n%s", i, ea, eb, errs[0], errs[1])
		}
		switch m := busy.FindStringSubmatch(errs[loser]); {
		case codes[loser] == exitError && m != nil:
			if m[1] != fmt.Sprint(pids[winner]) {
				t.Fatalf("round %d: the message names pid %s, the other resume is %d", i, m[1], pids[winner])
			}
		case codes[loser] == exitUsage && strings.Contains(errs[loser], "nothing to resume"):
			// the first was done before the second began
		default:
			t.Fatalf("round %d: the second resume: exit %d: %s", i, codes[loser], errs[loser])
		}
		checkResumedLog(t, audit.FileName(auditDir, session), true)
	}
}

// The crash test of resume: a rein resume is killed with SIGKILL at a
// random point, then resumed again, until one ends. After every kill the
// log verifies (a cut record is repaired with rein audit repair, which only
// drops it), and at the end it has one stop and no call ran twice.
func TestCrashKillDuringResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills rein resume many times; skipped in -short")
	}
	base := t.TempDir()
	script := crashScript(t, base)
	rng := rand.New(rand.NewPCG(3, 4))
	took := time.Second
	kills := 0
	for i := range 12 {
		state, auditDir, session := interruptedSession(t, base, script, i, 1+i%6)
		path := audit.FileName(auditDir, session)
		for attempt := 0; ; attempt++ {
			cmd, stderr := resumeProcess(t, state, auditDir, session)
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if attempt >= 4 { // the last one runs to its end
				if err := cmd.Wait(); err != nil {
					t.Fatalf("session %d: the last resume failed: %v\n%s", i, err, stderr.String())
				}
				break
			}
			timer := time.AfterFunc(time.Duration(rng.Int64N(int64(took))), func() { _ = cmd.Process.Kill() })
			err := cmd.Wait()
			if timer.Stop() { // it ended before the kill
				if err != nil {
					t.Fatalf("session %d: resume failed: %v\n%s", i, err, stderr.String())
				}
				took = max(time.Since(start), 50*time.Millisecond)
				break
			}
			if err == nil {
				break // it ended as the kill came
			}
			kills++
			data, _ := os.ReadFile(path)
			if _, cut, ferr := audit.FindCut(data); ferr != nil {
				t.Fatalf("session %d, kill %d: the log is damaged: %v", i, attempt, ferr)
			} else if cut {
				if _, ok, err := audit.Repair(path, time.Now()); err != nil || !ok {
					t.Fatalf("session %d: repair: %v", i, err)
				}
			}
			if hasStop(t, path) {
				break // killed after it wrote its stop, on its way out
			}
			checkResumedLog(t, path, false)
		}
		checkResumedLog(t, path, true)
	}
	t.Logf("%d resumes killed at random points; every log verified, none ran a call twice", kills)
}
