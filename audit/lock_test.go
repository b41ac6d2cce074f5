package audit_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/reinhq/rein/audit"
)

// When this test binary is started with AUDIT_TEST_APPEND=PATH, it is the
// second process of a lock test: it tries to continue the log at PATH and
// says what happened on stdout (the exit status says whether it got it).
func init() {
	path := os.Getenv("AUDIT_TEST_APPEND")
	if path == "" {
		return
	}
	w, _, err := audit.Append(path)
	if err != nil {
		fmt.Println(err)
		if errors.Is(err, audit.ErrBusy) {
			os.Exit(3)
		}
		os.Exit(1)
	}
	if err := w.Write(audit.Record{Type: audit.Resume, Reason: "the second process"}); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.Exit(0)
}

// appendInAnotherProcess runs Append on path in a second process.
func appendInAnotherProcess(t *testing.T, path string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "AUDIT_TEST_APPEND="+path)
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), strings.TrimSpace(string(out))
	case err != nil:
		t.Fatal(err)
	}
	return 0, strings.TrimSpace(string(out))
}

func interrupted(t *testing.T, dir string) string {
	t.Helper()
	w, err := audit.Create(dir, testSession)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []audit.Record{{Type: audit.SessionStart, Task: "t"}, {Type: audit.ModelCall, Step: 1}} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return audit.FileName(dir, testSession)
}

// A session's log is held by one process at a time, from before its first
// byte is read until Close: another process's Append is refused with who
// holds it and reads nothing; once the holder is done, it goes on.
func TestAppendLocksOutAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	path := interrupted(t, dir)
	w, recs, err := audit.Append(path)
	if err != nil || len(recs) != 2 {
		t.Fatalf("Append: %v (%d records)", err, len(recs))
	}
	code, out := appendInAnotherProcess(t, path)
	want := fmt.Sprintf("session %s is being resumed by another rein (pid %d)", testSession, os.Getpid())
	if code != 3 || out != want {
		t.Fatalf("second process: exit %d, %q; want exit 3, %q", code, out, want)
	}
	if err := w.Write(audit.Record{Type: audit.Resume, Reason: "the first process"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(audit.LockName(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock file is left behind: %v", err)
	}
	if code, out := appendInAnotherProcess(t, path); code != 0 {
		t.Fatalf("after Close, the second process cannot append: exit %d %s", code, out)
	}
	data, _ := os.ReadFile(path)
	rep, err := audit.Verify(bytes.NewReader(data))
	if err != nil || !rep.Intact() || rep.Records != 4 {
		t.Fatalf("%+v %v\n%s", rep, err, data)
	}
}

// A running session (Create) holds its log too: it cannot be resumed
// under it, and the message says it runs.
func TestCreateHoldsTheLock(t *testing.T) {
	dir := t.TempDir()
	w, err := audit.Create(dir, testSession)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(audit.Record{Type: audit.SessionStart}); err != nil {
		t.Fatal(err)
	}
	code, out := appendInAnotherProcess(t, audit.FileName(dir, testSession))
	if code != 3 || !strings.Contains(out, "still running") || !strings.Contains(out, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// The kernel releases the lock of a process that was killed; the lock file
// it leaves behind does not lock anyone out.
func TestStaleLockFileIsTakenOver(t *testing.T) {
	dir := t.TempDir()
	path := interrupted(t, dir)
	if err := os.WriteFile(audit.LockName(path), []byte("999999 resume\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, _, err := audit.Append(path)
	if err != nil {
		t.Fatalf("a stale lock file blocks Append: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Within one process, a second Append is refused as well.
	w, _, err = audit.Append(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, _, err := audit.Append(path); !errors.Is(err, audit.ErrBusy) {
		t.Fatalf("second Append in one process: %v", err)
	}
	if _, err := audit.Create(dir, testSession); !errors.Is(err, audit.ErrBusy) {
		t.Fatalf("Create of a held session: %v", err)
	}
}
