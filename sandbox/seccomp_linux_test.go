//go:build linux

package sandbox

import (
	"encoding/binary"
	"runtime"
	"slices"
	"testing"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

const retAllow = uint32(seccomp.ActionAllow)

// wantSeccomp is the filter's intent, written plainly: what it must answer
// for one system call.
func wantSeccomp(info *arch.Info, allow socketRules, auditArch, nr uint32, args [6]uint64) uint32 {
	if auditArch != uint32(info.ID) {
		return retENOSYS // a foreign ABI
	}
	if info.ID == arch.X86_64.ID && nr >= 0x40000000 {
		return retENOSYS // x32
	}
	name := info.SyscallNumbers[int(nr)]
	switch {
	case slices.Contains(seccompDenied, name):
		return retEPERM
	case name == "clone3":
		return retENOSYS
	case name == "clone" && args[0]&cloneNSFlags != 0, name == "unshare" && args[0]&unshareNSFlags != 0:
		return retEPERM
	case name == "socket":
		// The whole 64-bit value must be an allowed family.
		if d := args[0]; allow.inet && (d == unix.AF_INET || d == unix.AF_INET6) || allow.unix && d == unix.AF_UNIX {
			return retAllow
		}
		return retEPERM
	}
	return retAllow
}

// runSeccomp runs prog on one seccomp_data in x/net/bpf's VM. Seccomp loads
// words in the machine's byte order and the VM in network order, so every
// 32-bit word is written big-endian at the offset the filter reads it from.
func runSeccomp(t testing.TB, vm *bpf.VM, auditArch, nr uint32, args [6]uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[0:], nr)
	binary.BigEndian.PutUint32(data[4:], auditArch)
	for i, a := range args {
		lo, hi := 16+8*i, 16+8*i+4 // little-endian halves
		if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
			t.Skip("only little-endian machines")
		}
		binary.BigEndian.PutUint32(data[lo:], uint32(a))
		binary.BigEndian.PutUint32(data[hi:], uint32(a>>32))
	}
	ret, err := vm.Run(data)
	if err != nil {
		t.Fatalf("bpf: %v", err)
	}
	return uint32(ret)
}

func seccompVM(t testing.TB, allow socketRules) (*bpf.VM, *arch.Info) {
	t.Helper()
	raw, err := seccompProgram(allow)
	if err != nil {
		t.Skip(err) // an architecture without a filter: the helper refuses to run there
	}
	insts, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("the filter does not disassemble")
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatal(err)
	}
	info, err := arch.GetInfo("")
	if err != nil {
		t.Fatal(err)
	}
	return vm, info
}

func TestSeccompFilter(t *testing.T) {
	t.Parallel()
	vm, info := seccompVM(t, socketRules{})
	native := uint32(info.ID)
	nr := func(name string) uint32 {
		n, ok := info.SyscallNames[name]
		if !ok {
			t.Fatalf("no system call %s", name)
		}
		return uint32(n)
	}
	for _, c := range []struct {
		name  string
		arch  uint32
		nr    uint32
		args  [6]uint64
		want  uint32
		onlyX bool
	}{
		{"read", native, nr("read"), [6]uint64{}, retAllow, false},
		{"execve", native, nr("execve"), [6]uint64{}, retAllow, false},
		{"ptrace", native, nr("ptrace"), [6]uint64{16, 1}, retEPERM, false},
		{"process_vm_readv", native, nr("process_vm_readv"), [6]uint64{}, retEPERM, false},
		{"mount", native, nr("mount"), [6]uint64{}, retEPERM, false},
		{"bpf", native, nr("bpf"), [6]uint64{}, retEPERM, false},
		{"keyctl", native, nr("keyctl"), [6]uint64{}, retEPERM, false},
		{"setns", native, nr("setns"), [6]uint64{}, retEPERM, false},
		{"io_uring_setup", native, nr("io_uring_setup"), [6]uint64{}, retEPERM, false},
		{"clone thread", native, nr("clone"), [6]uint64{unix.CLONE_VM | unix.CLONE_THREAD | unix.CLONE_SIGHAND}, retAllow, false},
		{"clone fork", native, nr("clone"), [6]uint64{uint64(unix.SIGCHLD)}, retAllow, false},
		{"clone newuser", native, nr("clone"), [6]uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, retEPERM, false},
		{"clone newns", native, nr("clone"), [6]uint64{unix.CLONE_NEWNS}, retEPERM, false},
		{"clone newuser high bits", native, nr("clone"), [6]uint64{1<<40 | unix.CLONE_NEWUSER}, retEPERM, false},
		{"clone3", native, nr("clone3"), [6]uint64{}, retENOSYS, false},
		{"unshare newnet", native, nr("unshare"), [6]uint64{unix.CLONE_NEWNET}, retEPERM, false},
		{"unshare newtime", native, nr("unshare"), [6]uint64{unix.CLONE_NEWTIME}, retEPERM, false},
		{"unshare files", native, nr("unshare"), [6]uint64{unix.CLONE_FILES}, retAllow, false},
		{"socket inet", native, nr("socket"), [6]uint64{unix.AF_INET, unix.SOCK_STREAM}, retEPERM, false},
		{"socket inet6", native, nr("socket"), [6]uint64{unix.AF_INET6}, retEPERM, false},
		{"socket unix", native, nr("socket"), [6]uint64{unix.AF_UNIX}, retEPERM, false},
		{"socket netlink", native, nr("socket"), [6]uint64{unix.AF_NETLINK}, retEPERM, false},
		{"socketpair unix", native, nr("socketpair"), [6]uint64{unix.AF_UNIX}, retAllow, false},
		{"i386 unshare", uint32(arch.I386.ID), 310, [6]uint64{unix.CLONE_NEWUSER}, retENOSYS, true},
		{"i386 getpid", uint32(arch.I386.ID), 20, [6]uint64{}, retENOSYS, true},
		{"x32 ptrace", native, 0x40000000 | 101, [6]uint64{}, retENOSYS, true},
	} {
		if c.onlyX && info.ID != arch.X86_64.ID {
			continue
		}
		if got := runSeccomp(t, vm, c.arch, c.nr, c.args); got != c.want {
			t.Errorf("%s: filter returns %#x, want %#x", c.name, got, c.want)
		}
	}
	// What socket(2) may make, by the families allowed.
	for _, c := range []struct {
		allow  socketRules
		family uint64
		want   uint32
	}{
		{socketRules{unix: true}, unix.AF_UNIX, retAllow},
		{socketRules{unix: true}, unix.AF_INET, retEPERM},
		{socketRules{inet: true}, unix.AF_INET, retAllow},
		{socketRules{inet: true}, unix.AF_INET6, retAllow},
		{socketRules{inet: true}, unix.AF_UNIX, retEPERM},
		{socketRules{inet: true}, 1<<32 | unix.AF_INET, retEPERM},
		{socketRules{unix: true, inet: true}, unix.AF_PACKET, retEPERM},
		{socketRules{unix: true, inet: true}, unix.AF_VSOCK, retEPERM},
		{socketRules{unix: true, inet: true}, unix.AF_UNIX, retAllow},
	} {
		vm, _ := seccompVM(t, c.allow)
		if got := runSeccomp(t, vm, native, nr("socket"), [6]uint64{c.family}); got != c.want {
			t.Errorf("%+v, socket(%#x): filter returns %#x, want %#x", c.allow, c.family, got, c.want)
		}
	}
	// Found by FuzzSeccompFilter in go-seccomp-bpf's own argument checks: a
	// clone whose flags equal another checked call's number.
	for _, allow := range []socketRules{{}, {inet: true}, {unix: true}} {
		vm, _ := seccompVM(t, allow)
		for _, flags := range []uint64{uint64(nr("socket")), uint64(nr("unshare")), uint64(nr("clone"))} {
			if got := runSeccomp(t, vm, native, nr("clone"), [6]uint64{flags}); got != retAllow {
				t.Errorf("%+v, clone(%#x): filter returns %#x, want allow", allow, flags, got)
			}
			if got := runSeccomp(t, vm, native, nr("unshare"), [6]uint64{flags &^ unshareNSFlags}); got != retAllow {
				t.Errorf("%+v, unshare(%#x): filter returns %#x, want allow", allow, flags, got)
			}
		}
	}
}

// FuzzSeccompFilter checks the assembled BPF program against the plain
// statement of its intent (wantSeccomp), for any system call, architecture
// and arguments.
func FuzzSeccompFilter(f *testing.F) {
	vms := map[socketRules]*bpf.VM{}
	var info *arch.Info
	for _, a := range []socketRules{{}, {unix: true}, {inet: true}, {unix: true, inet: true}} {
		vms[a], info = seccompVM(f, a)
	}
	for _, name := range append(slices.Clone(seccompDenied), "clone", "clone3", "unshare", "socket", "read", "execve") {
		if n, ok := info.SyscallNames[name]; ok {
			f.Add(false, false, uint32(info.ID), uint32(n), uint64(unix.CLONE_NEWUSER), uint64(0))
			f.Add(true, false, uint32(info.ID), uint32(n), uint64(unix.AF_UNIX), uint64(1))
			f.Add(false, true, uint32(info.ID), uint32(n), uint64(unix.AF_INET6), uint64(0))
		}
	}
	f.Add(false, false, uint32(arch.I386.ID), uint32(26), uint64(16), uint64(1))
	f.Add(true, true, uint32(info.ID), uint32(0x40000065), uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, allowUnix, allowInet bool, auditArch, nr uint32, a0, a1 uint64) {
		allow := socketRules{unix: allowUnix, inet: allowInet}
		args := [6]uint64{a0, a1, a0 ^ a1, a1 >> 3, a0 << 7, ^a0}
		got := runSeccomp(t, vms[allow], auditArch, nr, args)
		if want := wantSeccomp(info, allow, auditArch, nr, args); got != want {
			t.Fatalf("arch %#x, nr %d (%s), args %#x, %+v: filter returns %#x, want %#x",
				auditArch, nr, info.SyscallNumbers[int(nr)], args, allow, got, want)
		}
	})
}
