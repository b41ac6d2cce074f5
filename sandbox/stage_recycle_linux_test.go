//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
)

// The stage dir of a command that wrote nothing serves the next command;
// one that holds anything of a command's (a file, a changed mode, owner
// or attribute of the work dir itself) is removed, and the next command
// sees the work dir as it is.
func TestStageRecycle(t *testing.T) {
	_, err := LandlockStatus()
	testenv.Need(t, "landlock", err)
	cases := []struct {
		name    string
		script  string
		recycle bool
	}{
		{"nothing", "true", true},
		{"reads", "cat f >/dev/null && ls -la >/dev/null", true},
		{"made-and-removed", "touch x && rm x && mkdir d && rmdir d", true},
		{"writes", "echo y > g", false},
		{"deletes", "rm f", false},
		{"root-mode", "chmod 0755 .", false},
		{"root-xattr", `/usr/bin/python3 -c 'import os; os.setxattr(".", "user.rein-test", b"x")'`, false},
		{"root-times", "touch -d @0 .", true}, // times are made new
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if strings.Contains(c.script, "/usr/bin/python3") {
				_, err := os.Stat("/usr/bin/python3")
				testenv.Need(t, "python3", err)
			}
			work := t.TempDir()
			if err := os.WriteFile(filepath.Join(work, "f"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			l := &Landlock{WorkDir: work, Stage: true}
			t.Cleanup(func() { l.Close() })
			st := recycleState(t, l)
			first := stagedRun(t, l, work, c.script).Staged
			dir := first.dir
			if err := first.Discard(); err != nil {
				t.Fatal(err)
			}
			st.removing.Wait()
			_, statErr := os.Stat(dir)
			if kept := statErr == nil; kept != c.recycle {
				t.Fatalf("after %q the stage dir was kept: %v, want %v (%v)", c.script, kept, c.recycle, statErr)
			}
			// The next command takes the kept dir, and sees the work dir
			// as it is: f unchanged, nothing of the first command's.
			before := time.Now().Add(-time.Minute).Unix()
			res := stagedRun(t, l, work, `test "$(cat f)" = x && ! test -e g && ! test -e x && stat -c %Y .`)
			next := res.Staged
			defer next.Discard()
			if mtime, _ := strconv.ParseInt(strings.TrimSpace(res.Stdout), 10, 64); mtime < before {
				t.Errorf("the next command sees the work dir's mtime as %s: a kept stage dir's times are not made new", res.Stdout)
			}
			if c.recycle && next.dir != dir {
				t.Errorf("the next command's stage dir is %s, not the kept %s", next.dir, dir)
			}
			if !c.recycle && next.dir == dir {
				t.Errorf("the next command reused %s", dir)
			}
			if !next.Empty() {
				t.Errorf("the check wrote: %v", next.Changes)
			}
		})
	}
}

// recycleState sets l up and returns its state.
func recycleState(t *testing.T, l *Landlock) *landlockState {
	t.Helper()
	st, err := l.setup()
	if err != nil {
		t.Fatal(err)
	}
	l.inflight.Done()
	if st.stageRoot == "" {
		testenv.Need(t, "overlay", l.StageErr())
	}
	return st
}

// stagedRun runs script staged and returns its result.
func stagedRun(t *testing.T, l *Landlock, work, script string) Result {
	t.Helper()
	res, err := l.Exec(t.Context(), Cmd{Script: script, Dir: work})
	if err != nil {
		t.Fatal(err)
	}
	if res.Staged == nil {
		testenv.Need(t, "overlay", l.StageErr())
		t.Fatalf("%q: not staged", script)
	}
	if res.ExitCode != 0 {
		t.Fatalf("%q: exit %d: %s", script, res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	return res
}
