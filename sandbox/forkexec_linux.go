//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The zygote starts each command with forkConfined instead of
// syscall.ForkExec because the command's Landlock domain must be entered by
// the child alone, after the fork and before the exec. A domain entered by
// a zygote thread before forking (as the zygote once did) stays that
// thread's while the command runs, and Landlock's signal and ptrace scopes
// let a process reach every task of its own domain: the command could stop
// or signal the zygote through that thread's id (or, when the runtime had
// put the worker on the main thread, through $PPID itself). Entered in the
// child, the domain is the command's alone and is nested below the
// zygote's, which no command can reach.
//
// runtime_BeforeFork and the other two are the Go runtime's fork hooks,
// the ones package syscall uses; the runtime keeps them reachable by
// linkname for programs that fork themselves (gVisor does). Between
// BeforeFork and AfterFork the parent must not allocate or grow its stack;
// the child runs only raw system calls and never returns.

//go:linkname runtimeBeforeFork syscall.runtime_BeforeFork
func runtimeBeforeFork()

//go:linkname runtimeAfterFork syscall.runtime_AfterFork
func runtimeAfterFork()

//go:linkname runtimeAfterForkInChild syscall.runtime_AfterForkInChild
func runtimeAfterForkInChild()

// confinedExec is what the child of forkConfined needs, made before the
// fork: raw pointers to NUL-terminated strings and arrays of them.
type confinedExec struct {
	argv0, argv, envv, dir uintptr
	std                    [3]uintptr // become 0, 1, 2; each above 2
	ruleset                uintptr    // entered by the child before the exec
	ppid                   uintptr    // the zygote; the child exits if it is gone
	pipe                   uintptr    // write end: the child's errno if the exec fails
}

// startConfined starts path with argv and env in dir, in a new session,
// with std as its stdin, stdout and stderr and nothing else, SIGKILL as its
// parent-death signal (the calling thread is its parent: keep it locked
// until the child is reaped), and the Landlock ruleset entered in the
// child. It returns once the child has exec'd, or with why it could not.
func startConfined(path string, argv, env []string, dir string, std [3]int, ruleset int) (int, error) {
	for _, fd := range std {
		if fd < 3 {
			return 0, fmt.Errorf("descriptor %d would be overwritten before it is moved", fd)
		}
	}
	argv0p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return 0, err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return 0, err
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return 0, err
	}
	dirp, err := syscall.BytePtrFromString(dir)
	if err != nil {
		return 0, err
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return 0, fmt.Errorf("exec status pipe: %w", err)
	}
	c := confinedExec{
		argv0:   uintptr(unsafe.Pointer(argv0p)),
		argv:    uintptr(unsafe.Pointer(&argvp[0])),
		envv:    uintptr(unsafe.Pointer(&envp[0])),
		dir:     uintptr(unsafe.Pointer(dirp)),
		std:     [3]uintptr{uintptr(std[0]), uintptr(std[1]), uintptr(std[2])},
		ruleset: uintptr(ruleset),
		ppid:    uintptr(unix.Getpid()),
		pipe:    uintptr(p[1]),
	}
	syscall.ForkLock.Lock()
	pid, errno := forkConfined(&c)
	syscall.ForkLock.Unlock()
	runtime.KeepAlive(argv0p)
	runtime.KeepAlive(argvp)
	runtime.KeepAlive(envp)
	runtime.KeepAlive(dirp)
	unix.Close(p[1])
	if errno != 0 {
		unix.Close(p[0])
		return 0, fmt.Errorf("fork: %w", errno)
	}
	var childErr syscall.Errno
	buf := (*[unsafe.Sizeof(childErr)]byte)(unsafe.Pointer(&childErr))[:]
	n := 0
	for n < len(buf) {
		m, err := unix.Read(p[0], buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || m == 0 {
			break
		}
		n += m
	}
	unix.Close(p[0])
	if n == 0 {
		return int(pid), nil // the exec closed the pipe
	}
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(int(pid), &ws, 0, nil); !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if n != len(buf) {
		return 0, errors.New("the command's child died before it could exec")
	}
	return 0, fmt.Errorf("%w (%w)", execFailed("the confined child could not run the program"), childErr)
}

// forkConfined forks; the child sets itself up as startConfined says and
// execs, or writes its errno on the pipe and exits 127. Never inlined: the
// child must run in a frame of its own, which the parent leaves at once,
// not in its caller's, whose locals the parent reads afterwards.
//
//go:noinline
//go:norace
//go:nosplit
func forkConfined(c *confinedExec) (pid uintptr, err1 syscall.Errno) {
	runtimeBeforeFork()
	// Called directly, so that nothing of ours lies between this frame and
	// the stub's: with vforkFlags the child runs on this stack first. The
	// thread keeps its P until the child execs (as os/exec's vfork does):
	// a slow exec (a cold binary on a slow file system) delays this
	// zygote's garbage collections for that long.
	pid, err1 = rawVfork(vforkFlags)
	if err1 != 0 || pid != 0 {
		// The parent, resumed once the child has exec'd or exited. It
		// returns at once and touches nothing the child may have written
		// but pid and err1, set after the child was gone.
		runtimeAfterFork()
		return pid, err1
	}
	// The child: one thread, on the zygote's memory and this thread's stack
	// (vforkFlags) until its exec, or on a copy (a plain fork). Raw calls
	// only; nothing it writes may matter to the parent.
	runtimeAfterForkInChild()
	if _, _, err1 = syscall.RawSyscall(unix.SYS_SETSID, 0, 0, 0); err1 != 0 {
		goto fail
	}
	if _, _, err1 = syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0, 0); err1 != 0 {
		goto fail
	}
	if ppid, _, _ := syscall.RawSyscall(unix.SYS_GETPPID, 0, 0, 0); ppid != c.ppid {
		err1 = syscall.ESRCH // the zygote died before the death signal was set
		goto fail
	}
	for i := uintptr(0); i < 3; i++ {
		if _, _, err1 = syscall.RawSyscall(unix.SYS_DUP3, c.std[i], i, 0); err1 != 0 {
			goto fail
		}
	}
	if _, _, err1 = syscall.RawSyscall(unix.SYS_CHDIR, c.dir, 0, 0); err1 != 0 {
		goto fail
	}
	if _, _, err1 = syscall.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, c.ruleset, 0, 0); err1 != 0 {
		goto fail
	}
	_, _, err1 = syscall.RawSyscall(unix.SYS_EXECVE, c.argv0, c.argv, c.envv)
fail:
	syscall.RawSyscall(unix.SYS_WRITE, c.pipe, uintptr(unsafe.Pointer(&err1)), unsafe.Sizeof(err1))
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 127, 0, 0)
	}
}
