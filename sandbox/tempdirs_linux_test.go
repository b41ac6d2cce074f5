//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
)

// A killed rein's temp dirs are removed by the next executor that starts,
// and nothing else is: not a live rein's (its lock held, here by another
// process), not a dir made a moment ago, not a dir without the mark (an
// older rein's, or anyone's).
func TestSweepHeld(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	old := time.Now().Add(-2 * sweepMinAge)
	mk := func(name string, age time.Time) string {
		t.Helper()
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(dir, "cmd-1", "work", "work"), 0o755); err != nil {
			t.Fatal(err)
		}
		// overlayfs leaves its work dir without permissions
		if err := os.Chmod(filepath.Join(dir, "cmd-1", "work", "work"), 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, age, age); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dead := []string{mk(heldPrefix("sandbox")+"1", old), mk(heldPrefix("stage")+"2", old), mk(heldPrefix("mask")+"3", old),
		mk(heldPrefix("docker-mask")+"7", old), mk(heldPrefix("docker-stage")+"8", old), mk(heldPrefix("stage-probe")+"9", old)}
	fresh := mk(heldPrefix("stage")+"4", time.Now())
	unmarked := mk("rein-stage-5", old)
	live := mk(heldPrefix("sandbox")+"6", old)
	// flock(1) holds the lock (-o: not its child), as a live rein would.
	holder := exec.Command("flock", "-o", "-x", live, "sleep", "60")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := holder.Start(); err != nil {
		t.Fatalf("flock(1), from util-linux: %v", err)
	}
	stop := func() {
		_ = syscall.Kill(-holder.Process.Pid, syscall.SIGKILL)
		_ = holder.Wait()
	}
	t.Cleanup(stop)
	for i := 0; ; i++ { // until the holder has the lock
		l, err := lockDir(live)
		if err != nil {
			break
		}
		l.Close()
		if i == 100 {
			t.Fatal("flock(1) did not take the lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := sweepHeld(); n != len(dead) {
		t.Errorf("swept %d dirs, want %d", n, len(dead))
	}
	for _, d := range dead {
		if _, err := os.Lstat(d); err == nil {
			t.Errorf("%s, left by a dead rein, is still there", d)
		}
	}
	for _, d := range []string{fresh, unmarked, live} {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s was swept: %v", d, err)
		}
	}
	// Its holder killed, the live one's lock is free: swept next time.
	stop()
	if err := os.Chtimes(live, old, old); err != nil {
		t.Fatal(err)
	}
	if n := sweepHeld(); n != 1 {
		t.Errorf("after its holder died: swept %d, want 1", n)
	}
}

// An executor's own dirs are held while it lives, so that a sweep by
// another executor (another session) leaves them, and removed by Close.
func TestHeldWhileOpen(t *testing.T) {
	_, err := LandlockStatus()
	testenv.Need(t, "landlock", err)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, ".env"), []byte("X=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &Landlock{WorkDir: work, Stage: true}
	if _, err := l.Exec(t.Context(), Cmd{Script: "true", Dir: work, Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	made, _ := filepath.Glob(filepath.Join(tmp, "rein-*-h*"))
	if len(made) != 3 {
		t.Fatalf("held dirs %v, want the sandbox's, the mask's and the stage root", made)
	}
	old := time.Now().Add(-2 * sweepMinAge)
	for _, d := range made {
		_ = os.Chtimes(d, old, old)
	}
	if n := sweepHeld(); n != 0 {
		t.Errorf("a live executor's dirs were swept: %d", n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "rein-*")); len(left) != 0 {
		t.Errorf("left after Close: %v", left)
	}
}

// TestSweepFollowsNoLink: a dead executor's private temp dir is its
// commands', so they could have planted links where overlayfs's work dir
// and its marks would be, to a file, to a directory, or instead of the
// work dir itself. The sweep removes the dir and the links, and changes,
// unlinks and removes nothing they point to.
func TestSweepFollowsNoLink(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	outside := t.TempDir()
	if err := os.Chmod(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What clearWork would unlink and rmdir by name under a work dir.
	marks := filepath.Join(outside, "tree", "work", "work", "incompat", "volatile")
	if err := os.MkdirAll(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(marks, "dirty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * sweepMinAge)
	plant := func(name string, links map[string]string) string {
		t.Helper()
		dir := filepath.Join(tmp, heldPrefix("sandbox")+name)
		for link, target := range links {
			p := filepath.Join(dir, link)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}
		// A directory left without permissions, as a user's commands can.
		if err := os.MkdirAll(filepath.Join(dir, "home", "locked"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, "home", "locked"), 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, old, old); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dirs := []string{
		plant("1", map[string]string{"work/work": victim}),
		plant("2", map[string]string{"work": filepath.Join(outside, "tree", "work")}),
		plant("3", map[string]string{"work/work": outside, "upper": outside, "cache/x": "/"}),
	}
	if n := sweepHeld(); n != len(dirs) {
		t.Errorf("swept %d, want %d", n, len(dirs))
	}
	for _, d := range dirs {
		if _, err := os.Lstat(d); err == nil {
			t.Errorf("%s is still there", d)
		}
	}
	if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file a planted link named: %v, %v; want it untouched at 0644", fi, err)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the directory a planted link named: %v, %v; want it untouched at 0755", fi, err)
	}
	if _, err := os.Stat(filepath.Join(marks, "dirty")); err != nil {
		t.Errorf("the sweep unlinked through a planted work dir: %v", err)
	}
}
