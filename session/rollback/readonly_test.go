//go:build linux

package rollback_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/session/rollback"
)

// roMount makes a read-only view of dir (a bind mount remounted
// read-only) and returns its path; skipped where mounting is not allowed.
func roMount(t *testing.T, dir string) string {
	t.Helper()
	ro := filepath.Join(t.TempDir(), "ro")
	must(t, os.MkdirAll(ro, 0o700))
	err := syscall.Mount(dir, ro, "", syscall.MS_BIND, "")
	if err == nil {
		t.Cleanup(func() { _ = syscall.Unmount(ro, syscall.MNT_DETACH) })
		err = syscall.Mount("", ro, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, "")
	}
	testenv.Need(t, "mount", err) // a read-only bind mount needs root (CAP_SYS_ADMIN)
	if f, err := os.Create(filepath.Join(ro, "probe")); err == nil {
		f.Close()
		t.Fatal("the read-only mount can be written")
	}
	return ro
}

// TestRestoreFromReadOnlyStore: a store that cannot be written (a
// read-only mount) is restored from, under a lock taken on the read-only
// lock file, or on the store's directory when there is none; a running
// session's lock still refuses it. What a restore must copy aside first
// (an in-flight change) is kept, since there is nowhere to copy it.
func TestRestoreFromReadOnlyStore(t *testing.T) {
	for _, noLockFile := range []bool{false, true} {
		e := newEnv(t, map[string]string{"a.txt": "a", "b.txt": "b"}, nil)
		before := tree(t, e.work)
		s := e.open(t)
		a := e.agent(t, s)
		a.write("a.txt", "agent")
		a.write("new/c.txt", "agent")
		must(t, s.Close())
		if noLockFile {
			must(t, os.Remove(filepath.Join(e.state, sessionID, "lock")))
		}
		ro := roMount(t, e.state)

		// A session running in the store: refused, read-only or not.
		running, err := rollback.Open(e.state, sessionID, e.work)
		must(t, err)
		if _, err := rollback.Restore(ro, sessionID); !noLockFile && !errors.Is(err, rollback.ErrBusy) {
			t.Errorf("restore of a read-only view of a running session: %v; want ErrBusy", err)
		}
		must(t, running.Close())
		if noLockFile {
			must(t, os.Remove(filepath.Join(e.state, sessionID, "lock"))) // Open made it again
		}

		j, err := rollback.Load(ro, sessionID)
		must(t, err)
		reports, err := j.Restore()
		if err != nil {
			t.Fatalf("no lock file %v: restore from a read-only store: %v", noLockFile, err)
		}
		if got := summary(reports); got != "deleted new/c.txt\nrestored a.txt\n" {
			t.Errorf("no lock file %v: restore reports:\n%s", noLockFile, got)
		}
		if got := tree(t, e.work); got != before {
			t.Errorf("no lock file %v: after the restore:\n%s\nwant\n%s", noLockFile, got, before)
		}
	}
}

// TestReadOnlyStoreNoCopy: a forced restore from a read-only store cannot
// copy what is there aside, so it keeps it and says why.
func TestReadOnlyStoreNoCopy(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": "a"}, nil)
	s := e.open(t)
	e.agent(t, s).write("a.txt", "agent")
	must(t, s.Close())
	writeTree(t, e.work, map[string]string{"a.txt": "the user's"})
	ro := roMount(t, e.state)
	reports, err := rollback.Restore(ro, sessionID, rollback.Force())
	must(t, err)
	if got := summary(reports); !strings.HasPrefix(got, "kept a.txt: what is there could not be copied aside first, so it was left alone (changed since the session wrote it): ") {
		t.Errorf("forced restore from a read-only store:\n%s", got)
	}
	if data, _ := os.ReadFile(filepath.Join(e.work, "a.txt")); string(data) != "the user's" {
		t.Errorf("a.txt = %q; it must be kept", data)
	}
}
