package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Local runs commands on this machine with the host's shell, as rein's own
// user. It isolates nothing (see the package comment); it only makes sure a
// command ends: when its timeout passes, when its context ends, and when its
// shell exits, whatever the command started in its process group is killed.
//
// Choices made for a script that starts background processes (`server &`):
// Exec returns as soon as the shell exits and kills the rest of the shell's
// process group at that moment, so nothing outlives the call and a
// background child that holds stdout open cannot keep Exec waiting. A script
// that wants its background work to finish must `wait` for it. A process
// that leaves the group (setsid, setpgid) escapes Local; Exec then stops
// reading its output after a short drain and returns.
//
// With Helper set, nothing a command starts outlives it, not even what
// left the group, and nothing outlives rein, however rein dies: each
// command runs under a small reaper, the Helper binary re-executed, which
// is a child subreaper (every orphan of the command is re-parented to it),
// and kills every descendant it finds under /proc when the shell exits,
// when the command times out or is aborted, and when rein dies (its
// parent-death signal, and a pipe from rein that reads EOF). Without
// Helper the shell gets SIGKILL when rein dies (Pdeathsig), so a crash
// does not leave the direct child running, but its own children are
// beyond that reach. Local runs on Linux only; elsewhere Exec returns
// ErrUnsupported.
//
// The zero Local is ready to use.
type Local struct {
	// Helper is the path of a binary whose main calls HelperMain when
	// IsHelper() (rein's does; os.Executable() for rein itself). Set, it
	// runs each command as its reaper (about one Go process start more per
	// command); empty, the shell runs directly under rein.
	Helper string
	// Shell runs the script as `Shell -c Script`. Empty means /bin/bash,
	// or /bin/sh where there is no bash.
	Shell string
	// MaxOutput is how many bytes of each of stdout and stderr are kept;
	// 0 means DefaultMaxOutput.
	MaxOutput int
	// Grace is how long a timed-out command has between SIGTERM and
	// SIGKILL; 0 means DefaultGrace, a negative value kills at once. An
	// aborted command (its context ended) is killed at once regardless.
	Grace time.Duration
}

var _ Executor = (*Local)(nil)

// Name returns "local".
func (*Local) Name() string { return "local" }

// drainDelay bounds how long Exec keeps reading output after every process
// of the group is gone; only a process that left the group can still hold
// the pipes then.
const drainDelay = 100 * time.Millisecond

// shell returns the shell to run.
func (l *Local) shell() string { return shellOr(l.Shell) }

func (l *Local) grace() time.Duration { return graceOr(l.Grace) }

// shellOr returns shell, or /bin/bash (/bin/sh where there is no bash)
// when it is empty.
func shellOr(shell string) string {
	if shell != "" {
		return shell
	}
	if _, err := os.Stat("/bin/bash"); err == nil {
		return "/bin/bash"
	}
	return "/bin/sh"
}

// graceOr returns grace, or DefaultGrace when it is 0; negative is 0.
func graceOr(grace time.Duration) time.Duration {
	if grace == 0 {
		return DefaultGrace
	}
	return max(grace, 0)
}

// prepare checks c and fills its defaults.
func prepare(c Cmd) (Cmd, error) {
	switch {
	case !filepath.IsAbs(c.Dir):
		return c, fmt.Errorf("%w: working directory %q is not absolute", ErrInvalid, c.Dir)
	case c.Timeout < 0:
		return c, fmt.Errorf("%w: negative timeout %v", ErrInvalid, c.Timeout)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Env == nil {
		c.Env = MinimalEnv()
	}
	return c, nil
}

// aborted returns the error for a command stopped because ctx ended.
func aborted(ctx context.Context) error {
	return fmt.Errorf("%w: %w", ErrAborted, context.Cause(ctx))
}
