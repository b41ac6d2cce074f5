//go:build linux

package sandbox_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeEnv switches the test binary into a probe: a program the escape
// tests copy into the work dir and run inside the sandbox (and outside, as
// the control) to make system calls a shell cannot.
const probeEnv = "REIN_SANDBOX_PROBE"

// probe runs the attack mode names with args. It prints what happened and
// returns 0 when the attack got through the kernel's permission checks,
// 1 when it was refused, 2 when it was used wrongly.
func probe(mode string, args []string) int {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	num := func(i int) int {
		n, _ := strconv.Atoi(arg(i))
		return n
	}
	var err error
	switch mode {
	case "ptrace":
		// PTRACE_SEIZE does not stop the target, and our exit detaches.
		err = unix.PtraceSeize(num(0))
	case "vmread":
		var buf [8]byte
		local := []unix.Iovec{{Base: &buf[0], Len: 8}}
		remote := []unix.RemoteIovec{{Base: 0x10000, Len: 8}}
		_, err = unix.ProcessVMReadv(num(0), local, remote, 0)
		if errors.Is(err, unix.EFAULT) {
			err = nil // the address was wrong, the permission was granted
		}
	case "socket":
		var fd int
		fd, err = unix.Socket(num(0), num(1), 0)
		if err == nil {
			unix.Close(fd)
		}
	case "socketpair":
		var fds [2]int
		fds, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
	case "connect-unix":
		var c net.Conn
		c, err = net.Dial("unix", arg(0))
		if err == nil {
			c.Close()
		}
	case "clone-newuser":
		cmd := exec.Command("/bin/sh", "-c", "true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		err = cmd.Run()
	case "fork":
		// Start up to N sleeps; the sandbox's task limit must stop it first.
		n, started := num(0), 0
		for ; started < n; started++ {
			if err = exec.Command("/bin/sleep", "60").Start(); err != nil {
				break
			}
		}
		fmt.Printf("started %d\n", started)
	case "syscall":
		err = permissionOnly(rawSyscall(arg(0), args[1:]))
	case "control-socket":
		err = talkToZygote(arg(0))
	default:
		fmt.Fprintf(os.Stderr, "unknown probe %q\n", mode)
		return 2
	}
	if err != nil {
		fmt.Printf("refused: %v (%s)\n", err, errnoName(err))
		return 1
	}
	fmt.Println("done")
	return 0
}

// talkToZygote looks through every descriptor this process has for a
// socket and, on each, asks in the zygote's protocol (encoded here by hand:
// length, 'R', id, then dir, path, argv and env as uvarint-counted bytes, with
// stdin, stdout, stderr and a status pipe as SCM_RIGHTS) for a command that
// creates path.
// It fails with ENOENT when there is no socket to talk to.
func talkToZygote(path string) error {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	body := str(nil, "/")
	body = str(body, "/bin/sh")
	body = binary.AppendUvarint(body, 3)
	for _, a := range []string{"/bin/sh", "-c", "echo ESCAPED > " + path} {
		body = str(body, a)
	}
	body = binary.AppendUvarint(body, 0)
	frame := binary.LittleEndian.AppendUint32(nil, uint32(1+8+len(body)))
	frame = append(frame, 'R')
	frame = binary.LittleEndian.AppendUint64(frame, 1<<40)
	frame = append(frame, body...)
	err := error(unix.ENOENT)
	for fd := 3; fd < 1024; fd++ {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			continue
		}
		if serr := unix.Sendmsg(fd, frame, unix.UnixRights(0, 1, 2, 1), nil, 0); serr != nil {
			fmt.Printf("socket %d: %v\n", fd, serr)
			continue
		}
		fmt.Printf("socket %d: sent\n", fd)
		err = nil
	}
	return err
}

// keySpecSession is KEY_SPEC_SESSION_KEYRING (-3) as a system call argument.
var keySpecSession = -3

// rawSyscall makes a harmless call of the named system call: one that
// fails on its arguments, or does nothing lasting, when it is allowed.
func rawSyscall(name string, args []string) error {
	var r1 uintptr
	var e syscall.Errno
	switch name {
	case "bpf":
		_, _, e = unix.Syscall(unix.SYS_BPF, unix.BPF_MAP_CREATE, 0, 0) // EFAULT when allowed
	case "keyctl":
		_, _, e = unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(keySpecSession), 0)
	case "io_uring_setup":
		_, _, e = unix.Syscall(unix.SYS_IO_URING_SETUP, 1, 0, 0) // EFAULT when allowed
	case "mount":
		p, _ := unix.BytePtrFromString("/nonexistent-rein-mount-target")
		_, _, e = unix.Syscall6(unix.SYS_MOUNT, 0, uintptr(unsafe.Pointer(p)), 0, unix.MS_REMOUNT, 0, 0)
	case "unshare-net":
		// A thread of a Go program may unshare its network namespace; the
		// probe exits right after, so the thread's namespace goes with it.
		_, _, e = unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWNET, 0, 0)
	case "setns":
		fd, err := unix.Open("/proc/self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		_, _, e = unix.Syscall(unix.SYS_SETNS, uintptr(fd), unix.CLONE_NEWNET, 0)
	case "finit_module":
		_, _, e = unix.Syscall(unix.SYS_FINIT_MODULE, ^uintptr(0), 0, 0) // EBADF when allowed
	case "perf_event_open":
		_, _, e = unix.Syscall6(unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0, 0) // EFAULT when allowed
	case "userfaultfd":
		r1, _, e = unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC, 0, 0)
		if e == 0 {
			unix.Close(int(r1))
		}
	case "clone3":
		_, _, e = unix.Syscall(unix.SYS_CLONE3, 0, 0, 0) // EFAULT when allowed
	default:
		return fmt.Errorf("no such probe syscall %q", name)
	}
	if e != 0 {
		return e
	}
	return nil
}

// permissionOnly keeps err only when it is a refusal (EPERM, EACCES,
// ENOSYS): any other error means the kernel let the call in and then
// disliked its arguments.
func permissionOnly(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOSYS) {
		return err
	}
	return nil
}

func errnoName(err error) string {
	var e syscall.Errno
	if errors.As(err, &e) {
		return unix.ErrnoName(e)
	}
	return "?"
}
