//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompDenied are the system calls the sandbox refuses with EPERM:
// tracing and reading other processes, mounting, kernel and module
// loading, keyrings, namespaces, swap, reboot, and the interfaces that
// have served kernel exploits or could get around the socket rule below
// (io_uring can open sockets without socket(2)). Names a architecture does
// not have are skipped.
var seccompDenied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd",
	"mount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick",
	"move_mount", "open_tree", "mount_setattr",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open", "userfaultfd", "open_by_handle_at",
	"keyctl", "add_key", "request_key",
	"setns", "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
}

// Namespace flags clone and unshare may not carry. CLONE_NEWTIME is
// unshare's only: in clone's flags that bit belongs to the exit signal.
const (
	cloneNSFlags   = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
	unshareNSFlags = cloneNSFlags | unix.CLONE_NEWTIME
)

// socketRules says which families socket(2) may make besides none.
type socketRules struct {
	unix bool // AF_UNIX: only where Landlock confines connect (ABI 9)
	inet bool // AF_INET and AF_INET6: only when the network policy lets commands reach a network
}

// seccompPolicy is the part of the filter that looks only at system call
// numbers, as go-seccomp-bpf policy groups, for the native architecture
// info. (Its argument conditions are not used: in go-seccomp-bpf v1.6.0 a
// condition that fails leaves the argument in the accumulator, and the
// next system call comparison then tests the argument instead of the
// number; FuzzSeccompFilter found a clone(2) refused that way. argFilter
// does those checks.)
func seccompPolicy(info *arch.Info, allow socketRules) seccomp.Policy {
	var denied []string
	for _, n := range seccompDenied {
		if _, ok := info.SyscallNames[n]; ok {
			denied = append(denied, n)
		}
	}
	if !allow.unix && !allow.inet {
		denied = append(denied, "socket")
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno | seccomp.Action(unix.EPERM), Names: denied},
			// clone3 hides its flags in memory a filter cannot read: answer
			// that it does not exist, and libc falls back to clone.
			{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
		},
	}
}

// seccomp_data offsets (little-endian machines: the low half of an
// argument comes first).
const (
	offNr      = 0
	offArch    = 4
	offArg0Lo  = 16
	offArg0Hi  = 20
	retEPERM   = uint32(seccomp.ActionErrno) | uint32(unix.EPERM)
	retENOSYS  = uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS)
	labelDeny  = "deny"
	labelAfter = "after"
)

// argFilter is the part of the filter that looks at arguments: clone and
// unshare with a namespace flag, and socket with a family not allowed, get
// EPERM; every other call falls through to what follows.
func argFilter(info *arch.Info, allow socketRules) ([]bpf.Instruction, error) {
	var a bpfAsm
	nr := func(name string) uint32 { return uint32(info.SyscallNames[name]) }
	a.op(bpf.LoadAbsolute{Off: offNr, Size: 4})
	a.jeq(nr("clone"), "clone")
	a.jeq(nr("unshare"), "unshare")
	if allow.unix || allow.inet {
		a.jeq(nr("socket"), "socket")
	}
	a.jump(labelAfter)

	a.label("clone")
	a.op(bpf.LoadAbsolute{Off: offArg0Lo, Size: 4}) // every namespace flag is in the low half
	a.jset(cloneNSFlags, labelDeny)
	a.jump(labelAfter)

	a.label("unshare")
	a.op(bpf.LoadAbsolute{Off: offArg0Lo, Size: 4})
	a.jset(unshareNSFlags, labelDeny)
	a.jump(labelAfter)

	if allow.unix || allow.inet {
		// The family is an int: anything in the high half is refused
		// rather than guessed at.
		a.label("socket")
		a.op(bpf.LoadAbsolute{Off: offArg0Hi, Size: 4})
		a.jne(0, labelDeny)
		a.op(bpf.LoadAbsolute{Off: offArg0Lo, Size: 4})
		if allow.inet {
			a.jeq(unix.AF_INET, labelAfter)
			a.jeq(unix.AF_INET6, labelAfter)
		}
		if allow.unix {
			a.jeq(unix.AF_UNIX, labelAfter)
		}
		a.jump(labelDeny)
	}

	a.label(labelDeny)
	a.op(bpf.RetConstant{Val: retEPERM})
	a.label(labelAfter)
	return a.resolve()
}

// seccompProgram assembles the filter for this machine: first it refuses
// (ENOSYS) every system call made through a foreign ABI, such as int 0x80
// on x86-64 (go-seccomp-bpf would apply the default action, allow, to
// those, and a deny list is worthless if another numbering gets past it);
// then argFilter; then the policy by number.
func seccompProgram(allow socketRules) ([]bpf.RawInstruction, error) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		return nil, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, err
	}
	args, err := argFilter(info, allow)
	if err != nil {
		return nil, err
	}
	policy := seccompPolicy(info, allow)
	byNumber, err := policy.Assemble() // starts over: loads the architecture and number itself
	if err != nil {
		return nil, fmt.Errorf("seccomp policy: %w", err)
	}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: retENOSYS},
	}
	prog = append(prog, args...)
	return bpf.Assemble(append(prog, byNumber...))
}

// bpfAsm assembles a short BPF program with forward jumps to labels.
type bpfAsm struct {
	insts  []bpf.Instruction
	labels map[string]int
	fixes  []bpfFix
}

// bpfFix is a jump whose target is a label: its true branch for a
// conditional jump, or the jump itself.
type bpfFix struct {
	at    int
	label string
}

func (a *bpfAsm) op(in bpf.Instruction) { a.insts = append(a.insts, in) }

func (a *bpfAsm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.insts)
}

func (a *bpfAsm) cond(c bpf.JumpTest, v uint32, label string) {
	a.fixes = append(a.fixes, bpfFix{len(a.insts), label})
	a.op(bpf.JumpIf{Cond: c, Val: v})
}

func (a *bpfAsm) jeq(v uint32, label string)  { a.cond(bpf.JumpEqual, v, label) }
func (a *bpfAsm) jne(v uint32, label string)  { a.cond(bpf.JumpNotEqual, v, label) }
func (a *bpfAsm) jset(v uint32, label string) { a.cond(bpf.JumpBitsSet, v, label) }

func (a *bpfAsm) jump(label string) {
	a.fixes = append(a.fixes, bpfFix{len(a.insts), label})
	a.op(bpf.Jump{})
}

// resolve fills in the jumps; every label must lie ahead of its jumps.
func (a *bpfAsm) resolve() ([]bpf.Instruction, error) {
	for _, f := range a.fixes {
		to, ok := a.labels[f.label]
		skip := to - f.at - 1
		if !ok || skip < 0 || skip > 255 {
			return nil, fmt.Errorf("bpf: bad jump to %q", f.label)
		}
		switch in := a.insts[f.at].(type) {
		case bpf.JumpIf:
			in.SkipTrue = uint8(skip)
			a.insts[f.at] = in
		case bpf.Jump:
			in.Skip = uint32(skip)
			a.insts[f.at] = in
		}
	}
	return a.insts, nil
}

// installSeccomp loads prog on the calling thread only (no TSYNC): the
// helper execs from this thread, and the new program inherits its filter.
// no_new_privs must already be set.
func installSeccomp(prog []bpf.RawInstruction) error {
	filter := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filter)
	if e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	return nil
}
