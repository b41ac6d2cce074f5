//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// isWhiteout reports whether fi, in an overlay's upper dir, is a whiteout:
// a character device 0/0.
func isWhiteout(fi fs.FileInfo) bool {
	if fi.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Rdev == 0
}

// isOpaque reports whether dir, in an overlay's upper dir, is opaque: it
// hides what the lower dir holds under it (trusted.overlay.opaque as root,
// user.overlay.opaque with userxattr).
func isOpaque(dir string) bool {
	buf := make([]byte, 8)
	for _, name := range []string{"trusted.overlay.opaque", "user.overlay.opaque"} {
		if n, err := unix.Lgetxattr(dir, name, buf); err == nil && n == 1 && buf[0] == 'y' {
			return true
		}
	}
	return false
}

// StageErr says why commands are not staged although Stage asked for it
// (no overlayfs, a work dir overlayfs cannot name); nil when they are, or
// before the first command. It waits for Prepare's build, which decides.
func (l *Landlock) StageErr() error {
	st, err := l.built()
	if err != nil || st == nil {
		return nil // not built: the next command builds again and decides
	}
	st.zmu.Lock()
	defer st.zmu.Unlock()
	return st.stageErr
}

// notStaging says why a command asked to run staged (Cmd.MustStage) is
// not: the executor does not stage now.
func (l *Landlock) notStaging(st *landlockState) error {
	switch {
	case l.PerCommand:
		return errors.New("the landlock sandbox runs each command in a helper of its own (PerCommand), which does not stage")
	case !l.Stage:
		return errors.New("the landlock sandbox was not asked to stage its commands (Landlock.Stage)")
	}
	st.zmu.Lock()
	why := st.stageErr
	st.zmu.Unlock()
	if why == nil {
		why = errors.New("the landlock sandbox does not stage its commands here")
	}
	return fmt.Errorf("%w; commands run unstaged from now on", why)
}
