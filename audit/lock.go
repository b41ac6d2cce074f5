package audit

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrBusy is returned (as a *BusyError) by Create and Append when another
// process holds the session's log: it is still running, or being resumed.
var ErrBusy = errors.New("audit log in use by another process")

// BusyError says who holds a session's log.
type BusyError struct {
	Session string
	// PID is the holder's process id, 0 when its lock file does not say
	// (it had just taken the lock and not written it yet).
	PID int
	// Doing is what the holder does with the session: "run" or "resume".
	Doing string
}

func (e *BusyError) Error() string {
	who := "another rein"
	if e.PID > 0 {
		who = fmt.Sprintf("another rein (pid %d)", e.PID)
	}
	if e.Doing == lockResume {
		return fmt.Sprintf("session %s is being resumed by %s", e.Session, who)
	}
	return fmt.Sprintf("session %s is in use by %s: it is still running or being resumed", e.Session, who)
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// What the holder of a lock does with the session.
const (
	lockRun    = "run"
	lockResume = "resume"
)

// LockName is the lock file of the log at path: the log's name with .lock
// added. While a Writer from Create or Append is open, it holds an
// exclusive flock(2) on this file, which the kernel releases when the
// process ends, however it ends.
func LockName(path string) string { return path + ".lock" }

// holderLine is what a lock file says: "PID WHAT".
func holderLine(doing string) []byte {
	return []byte(strconv.Itoa(os.Getpid()) + " " + doing + "\n")
}

// readHolder parses a lock file's content; zero values when it is empty
// or not what a Writer writes.
func readHolder(f *os.File) (pid int, doing string) {
	buf := make([]byte, 64)
	n, _ := f.ReadAt(buf, 0)
	p, d, _ := strings.Cut(strings.TrimSpace(string(buf[:n])), " ")
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 {
		return 0, ""
	}
	return pid, d
}
