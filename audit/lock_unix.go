//go:build unix

package audit

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lock takes the exclusive lock of the log at path for session, without
// waiting: a *BusyError when another process holds it. The lock file is
// removed again by unlock; one left behind by a process that was killed is
// taken over, since the kernel released its lock.
func lock(path, session, doing string) (*os.File, error) {
	name := LockName(path)
	for {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("audit log: lock %s: %w", name, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			defer f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				// The holder writes who it is right after it takes the
				// lock: give it that moment before saying "another rein".
				pid, what := readHolder(f)
				for i := 0; pid == 0 && i < 20; i++ {
					time.Sleep(5 * time.Millisecond)
					pid, what = readHolder(f)
				}
				return nil, &BusyError{Session: session, PID: pid, Doing: what}
			}
			return nil, fmt.Errorf("audit log: lock %s: %w", name, err)
		}
		// The holder before may have removed the file between our open
		// and our flock: then the lock is on a file nobody else will
		// open, and the one at name (if any) is the lock.
		var held, now unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &held); err != nil {
			f.Close()
			return nil, fmt.Errorf("audit log: lock %s: %w", name, err)
		}
		if err := unix.Stat(name, &now); err != nil || now.Ino != held.Ino || now.Dev != held.Dev {
			f.Close()
			if err != nil && !errors.Is(err, unix.ENOENT) {
				return nil, fmt.Errorf("audit log: lock %s: %w", name, err)
			}
			continue
		}
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt(holderLine(doing), 0) // who holds it, for the next one's message only
		}
		return f, nil
	}
}

// unlock removes the lock file, while it is still held, and releases it.
func unlock(f *os.File) error {
	if f == nil {
		return nil
	}
	err := os.Remove(f.Name())
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return errors.Join(err, f.Close())
}
