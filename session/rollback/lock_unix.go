//go:build unix

package rollback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockFile opens name and takes an exclusive lock on it without waiting;
// ErrBusy when another open file holds it. Closing the file releases the
// lock, and so does the process's end, however it ends.
func lockFile(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the session store: %w", err)
	}
	if err := flock(f, unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// lockToRestore takes the lock a restore needs: exclusive, as lockFile,
// when the store can be written. A store that cannot (a read-only mount, a
// directory of another user's) can still be restored from: the lock file
// is opened read-only and locked — exclusively where the system allows it
// on a read-only file (Linux does), shared otherwise — and when there is no
// lock file, the store's directory itself is locked. A running session
// holds the lock file exclusively, so it is refused either way.
func lockToRestore(name string) (*os.File, error) {
	f, err := lockFile(name)
	if err == nil || errors.Is(err, ErrBusy) || !readOnly(err) {
		return f, err
	}
	f, err = os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		// No session ever locked it: a store that cannot be written
		// cannot have a session running in it.
		f, err = os.Open(filepath.Dir(name))
	}
	if err != nil {
		return nil, fmt.Errorf("lock the session store (read-only): %w", err)
	}
	err = flock(f, unix.LOCK_EX)
	if errors.Is(err, unix.EBADF) || errors.Is(err, unix.EINVAL) {
		err = flock(f, unix.LOCK_SH)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readOnly reports whether err says a file cannot be created or written.
func readOnly(err error) bool {
	return errors.Is(err, unix.EROFS) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

// flock locks f with how, without waiting: ErrBusy when it is held.
func flock(f *os.File, how int) error {
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return ErrBusy
		}
		return fmt.Errorf("lock the session store: %w", err)
	}
	return nil
}
