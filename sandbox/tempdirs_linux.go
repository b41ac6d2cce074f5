//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The landlock executor's temp dirs (its commands' private temp dir, the
// empty file it masks credentials with, the staged commands' upper dirs)
// are removed by Close. A rein that is killed (SIGKILL, the OOM killer, a
// crash) runs no Close, and its dirs stayed in the temp dir for good, with
// whatever its last staged command wrote. Each such dir is now named
// heldPrefix(kind) and held by its maker with a lock on the directory
// (flock) for the maker's life; the kernel drops the lock when the maker
// dies, however it dies. The next executor to start removes the dirs whose
// lock it can take: their maker is gone. A lock, not a pid, so that a rein
// in another pid namespace sharing the temp dir is never mistaken for a
// dead one; dirs of a rein that predates the lock do not carry the mark
// and are left alone.

// heldKinds are the kinds of held dir: the landlock executor's, the
// staging probes' (sandbox doctor), and the docker backend's mask source
// and stage root.
var heldKinds = []string{"sandbox", "mask", "stage", "stage-probe", "docker-mask", "docker-stage"}

// heldPrefix is the name prefix of a held dir of kind.
func heldPrefix(kind string) string { return "rein-" + kind + "-h" }

// sweepMinAge spares dirs made or changed this recently: a dir another
// rein made a moment ago, not yet locked, is not swept from under it.
const sweepMinAge = time.Minute

// makeHeld makes a temp dir of kind and locks it; the caller keeps the
// lock open until it has removed the dir.
func makeHeld(kind string) (string, *os.File, error) {
	dir, err := os.MkdirTemp("", heldPrefix(kind))
	if err != nil {
		return "", nil, err
	}
	lock, err := lockDir(dir)
	if err != nil {
		os.Remove(dir)
		return "", nil, err
	}
	return dir, lock, nil
}

// MakeHeld makes a temp dir of kind, one of the docker backend's
// ("docker-mask", "docker-stage"), held by a lock the caller keeps open
// until it has removed the dir; SweepHeld removes it once its maker is
// gone without removing it (a rein killed).
func MakeHeld(kind string) (string, *os.File, error) {
	if !slices.Contains(heldKinds, kind) {
		return "", nil, fmt.Errorf("no held temp dir of kind %q", kind)
	}
	return makeHeld(kind)
}

// SweepHeld removes the held temp dirs of this user whose maker is gone,
// landlock's and docker's alike, and returns how many it removed.
func SweepHeld() int { return sweepHeld() }

// lockDir opens dir and takes its lock without waiting; it fails with
// EWOULDBLOCK while another process holds it.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return f, nil
}

// sweepHeld removes the held dirs of this user in the temp dir whose maker
// is gone, and returns how many it removed.
func sweepHeld() int {
	n := 0
	for _, kind := range heldKinds {
		dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), heldPrefix(kind)+"*"))
		for _, dir := range dirs {
			fi, err := os.Lstat(dir)
			if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < sweepMinAge {
				continue
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
				continue
			}
			lock, err := lockDir(dir)
			if err != nil {
				continue // held: its maker lives
			}
			removeSwept(dir)
			lock.Close()
			n++
		}
	}
	return n
}

// removeSwept removes a dead executor's held dir without following a
// link anywhere in it. Its commands could write there (the private temp
// dir is theirs), and a link planted where overlayfs's work dir would be
// must not lead a chmod, an unlink or a rmdir out of the temp dir, as
// removeStageDir's shortcuts by name would. RemoveAll never follows a
// link; only what it could not remove (directories a user's rein left
// without permissions) is given them back first, through an os.Root, which
// refuses any link that leads out of the dir.
func removeSwept(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return
	}
	_ = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = r.Chmod(p, 0o700) // before WalkDir reads it
		}
		return nil
	})
	_ = r.Close()
	_ = os.RemoveAll(dir)
}
