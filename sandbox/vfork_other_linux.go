//go:build linux && !(amd64 || arm64)

package sandbox

import (
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// vforkFlags: a plain fork where no rawVfork stub is written.
const vforkFlags = uintptr(syscall.SIGCHLD)

// rawVfork forks (never with CLONE_VM here: a Go function's frame would be
// shared with the child).
//
//go:nosplit
func rawVfork(flags uintptr) (pid uintptr, errno syscall.Errno) {
	if runtime.GOARCH == "s390x" {
		pid, _, errno = syscall.RawSyscall6(unix.SYS_CLONE, 0, flags, 0, 0, 0, 0)
	} else {
		pid, _, errno = syscall.RawSyscall6(unix.SYS_CLONE, flags, 0, 0, 0, 0, 0)
	}
	return pid, errno
}
