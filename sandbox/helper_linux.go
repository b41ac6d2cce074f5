//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// HelperMain is the landlock helper: a rein binary's main calls it with
// os.Args[2:] when IsHelper() reports true. It joins the command's pids
// cgroup, sets its limits, checks that it was started outside rein's
// network namespace, drops every capability, sets no_new_privs, applies a
// Landlock ruleset (the best the kernel offers, at least MinLandlockABI) and
// a seccomp filter, and execs the command with the environment rein passed
// it. It returns only when something failed, and nothing ran: 126 when the
// sandbox could not be set up, 127 when the program could not be executed,
// with a message on stderr (and on the status pipe). The landlock executor
// has it exec the rein binary again as its zygote (arguments starting with
// -zygote), which checks that it was born confined and then starts the
// executor's commands (see zygoteMain).
//
// Every restriction is applied to the calling OS thread alone, which then
// execs: the new program is that thread, so it has them all, and nothing
// else of the helper outlives the exec. go-landlock's process-wide
// enforcement is not used: on kernels before Landlock ABI 8, in a binary
// built with cgo, it goes through libpsx, which finds the process's threads
// in /proc/<getpid()>/task. In a new PID namespace getpid() is the
// namespace's pid (1) while /proc still shows the host's, so libpsx waits
// for threads of the host's init that will never answer and spins at 100%
// CPU: the hang seen with CLONE_NEWPID. The helper uses no PID namespace
// (its pid 1 would ignore signals and outlive a killed shell's children
// differently from Local), and thanks to the per-thread approach it would
// not hang in one either (TestHelperInPIDNamespace).
func HelperMain(args []string) int {
	if len(args) > 0 && args[0] == zygoteArg {
		return zygoteMain(args[1:])
	}
	if len(args) > 0 && args[0] == reaperArg {
		return reaperMain(args[1:])
	}
	if len(args) > 0 && args[0] == stagerArg {
		return stagerMain(args[1:])
	}
	runtime.LockOSThread() // never unlocked: the restrictions are this thread's
	cfg, err := parseHelperArgs(args)
	if err != nil {
		return helperFail(nil, 126, fmt.Errorf("arguments: %w", err))
	}
	var status *os.File
	if cfg.statusFD >= 0 {
		if _, err := unix.FcntlInt(uintptr(cfg.statusFD), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
			return helperFail(nil, 126, fmt.Errorf("status fd: %w", err))
		}
		status = os.NewFile(uintptr(cfg.statusFD), "status")
	}
	env, err := decodeEnv(os.Environ())
	if err != nil {
		return helperFail(status, 126, err)
	}
	abi, err := confine(cfg)
	if err != nil {
		return helperFail(status, 126, err)
	}
	if err := closeOnExec(); err != nil {
		return helperFail(status, 126, err)
	}
	for _, fd := range cfg.keepFDs { // for the zygote
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return helperFail(status, 126, fmt.Errorf("keeping descriptor %d: %w", fd, err))
		}
	}
	if status != nil {
		if _, err := status.Write([]byte{statusReady}); err != nil {
			return helperFail(nil, 126, fmt.Errorf("status: %w", err))
		}
	}
	err = syscall.Exec(cfg.program(), cfg.argv, env)
	code := 126
	if errors.Is(err, syscall.ENOENT) {
		code = 127
	}
	return helperFail(status, code, fmt.Errorf("exec %s (Landlock ABI %d): %w", cfg.program(), abi, err))
}

// closeOnExec marks every descriptor above stderr close-on-exec, so the
// command gets only stdin, stdout and stderr: whatever rein inherited
// without O_CLOEXEC (a terminal's, a parent's pipe or file) would otherwise
// reach it open, and Landlock does not judge descriptors already open.
func closeOnExec() error {
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing open descriptors: %w", err)
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC) // EBADF: ReadDir's own, now closed
		}
	}
	return nil
}

// helperFail reports err and returns code.
func helperFail(status *os.File, code int, err error) int {
	msg := err.Error()
	fmt.Fprintf(os.Stderr, "rein sandbox: %s\n", msg)
	if status != nil {
		_, _ = status.Write(append([]byte{statusFailed}, msg...))
	}
	return code
}

// confine applies every restriction to the calling thread and returns the
// Landlock ABI in force.
func confine(cfg helperConfig) (int, error) {
	if err := setLimits(cfg); err != nil {
		return 0, err
	}
	if err := mask(cfg); err != nil {
		return 0, err
	}
	if cfg.netnsFD >= 0 {
		// This thread only: it is the one that execs.
		if err := unix.Setns(cfg.netnsFD, unix.CLONE_NEWNET); err != nil {
			return 0, fmt.Errorf("entering the network namespace: %w", err)
		}
		_ = unix.Close(cfg.netnsFD)
	}
	if id, err := netnsID("/proc/thread-self/ns/net"); err != nil {
		return 0, err
	} else if id == cfg.netns {
		return 0, errors.New("still in rein's network namespace: the helper must be started with CLONE_NEWNET")
	}
	if cfg.stageFD >= 0 {
		// Before any restriction: the stager mounts for rein from outside
		// the domain (see stagerMain).
		// Without a stager rein's first mount request fails, and the
		// executor runs its commands unstaged (StageErr says why).
		if err := startStager(cfg.stageFD, cfg.stageWork, cfg.stageRoot, cfg); err != nil {
			fmt.Fprintf(os.Stderr, "rein sandbox: %v: commands run unstaged\n", err)
		}
	}
	if cfg.memcg != "" {
		if err := os.WriteFile(filepath.Join(cfg.memcg, "cgroup.procs"), []byte("0"), 0); err != nil {
			return 0, fmt.Errorf("joining the memory cgroup: %w", err)
		}
	}
	if cfg.cgroup != "" {
		// Join before anything of the command's can fork, and after the
		// stager (rein's own, outside the domain) started: it stays out of
		// the executor's cgroup, whose leftovers rein kills after each
		// command (all but the zygote). "0" is the writer itself.
		if err := os.WriteFile(filepath.Join(cfg.cgroup, "cgroup.procs"), []byte("0"), 0); err != nil {
			return 0, fmt.Errorf("joining the pids cgroup: %w", err)
		}
	}
	abi := landlockABI()
	if abi < MinLandlockABI {
		return abi, fmt.Errorf("Landlock ABI %d, need at least %d", abi, MinLandlockABI)
	}
	// Network policy none: no IP socket at all, on top of the empty
	// network namespace and Landlock's TCP rules. Proxy: IP sockets, which
	// reach only the namespace's loopback, where Landlock lets a command
	// connect to the proxy's port alone (the ruleset rein built).
	prog, err := seccompProgram(socketRules{unix: abi >= 9, inet: cfg.net == NetProxy})
	if err != nil {
		return abi, err
	}
	fd := cfg.rulesetFD
	if fd < 0 {
		if fd, err = newRuleset(cfg.grants); err != nil {
			return abi, err
		}
	}
	defer unix.Close(fd)
	if err := dropCapabilities(); err != nil {
		return abi, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return abi, fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return abi, fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if err := installSeccomp(prog); err != nil {
		return abi, err
	}
	return abi, nil
}

// setLimits sets RLIMIT_NPROC and RLIMIT_FSIZE as asked and turns core
// dumps off.
func setLimits(cfg helperConfig) error {
	set := func(res int, v int64, name string) error {
		lim := unix.Rlimit{Cur: uint64(v), Max: uint64(v)}
		if err := unix.Setrlimit(res, &lim); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if cfg.nproc > 0 {
		if err := set(unix.RLIMIT_NPROC, cfg.nproc, "RLIMIT_NPROC"); err != nil {
			return err
		}
	}
	if cfg.fsize > 0 {
		if err := set(unix.RLIMIT_FSIZE, cfg.fsize, "RLIMIT_FSIZE"); err != nil {
			return err
		}
	}
	return set(unix.RLIMIT_CORE, 0, "RLIMIT_CORE")
}

// Landlock access rights by grant kind. Rights a kernel does not know are
// dropped by go-landlock's best effort; directory rights are dropped for
// a path that is not a directory.
const (
	accessRead  = ll.AccessFSReadFile | ll.AccessFSReadDir
	accessRX    = accessRead | ll.AccessFSExecute
	accessDev   = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
	accessWrite = ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSym | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSRefer
	accessFileOnly = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

var grantAccess = map[grantKind]landlock.AccessFSSet{
	grantRX:  accessRX,
	grantR:   accessRead,
	grantLs:  ll.AccessFSReadDir,
	grantRW:  accessRX | accessWrite,
	grantDev: accessDev,
}

// newRuleset builds the Landlock ruleset for grants: the best the kernel
// offers (go-landlock's V11 in best effort), handling every file system and
// TCP/UDP access right it knows and both scopes, with no network rule, so
// TCP bind and connect are refused. It returns the ruleset's descriptor
// (close-on-exec).
func newRuleset(gs []grant, connectPorts ...uint16) (int, error) {
	rules := landlockRules(gs)
	for _, p := range connectPorts {
		rules = append(rules, landlock.ConnectTCP(p))
	}
	fd, flags, err := landlock.V11.BestEffort().NewRulesetFD(rules...)
	switch {
	case err != nil:
		return -1, fmt.Errorf("landlock ruleset: %w", err)
	case fd < 0:
		return -1, errors.New("landlock: nothing to enforce on this kernel")
	case flags != 0:
		unix.Close(fd)
		return -1, fmt.Errorf("landlock: unexpected restrict flags %#x", flags)
	}
	return fd, nil
}

// landlockRules turns grants into go-landlock rules. A path that has gone
// missing since rein listed it is skipped, except the read-write ones.
func landlockRules(gs []grant) []landlock.Rule {
	rules := make([]landlock.Rule, 0, len(gs))
	for _, g := range gs {
		acc := grantAccess[g.kind]
		if fi, err := os.Stat(g.path); err == nil && !fi.IsDir() {
			acc &= accessFileOnly
			if acc == 0 {
				continue // listing rights on a file: nothing to grant
			}
		}
		r := landlock.PathAccess(acc, g.path)
		if g.kind != grantRW {
			r = r.IgnoreIfMissing()
		}
		rules = append(rules, r)
	}
	return rules
}

// dropCapabilities empties the bounding, ambient, inheritable, permitted
// and effective capability sets of the calling thread, so that not even
// an exec as root gets any back. A thread without CAP_SETPCAP that has no
// capability at all is left as it is.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(string(trimNL(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // beyond the kernel's last capability
			}
			if data[0].Permitted|data[1].Permitted != 0 || os.Geteuid() == 0 {
				return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
			}
			break // unprivileged: nothing to drop, and exec as non-root gains nothing
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

// mask hides cfg's credential files and directories in the helper's mount
// namespace (rein starts it with CLONE_NEWNS when there are any): mounts
// are made private first, so nothing reaches the host's namespace, then
// an empty read-only file is bind-mounted over each file and an empty
// read-only tmpfs over each directory. A path that has gone is skipped.
func mask(cfg helperConfig) error {
	if len(cfg.maskFiles) == 0 && len(cfg.maskDirs) == 0 && len(cfg.ro) == 0 {
		return nil
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("masking credential files: a private mount namespace: %w", err)
	}
	for _, p := range cfg.maskFiles {
		if err := unix.Mount(cfg.maskSrc, p, "", unix.MS_BIND, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("masking %s: %w", p, err)
		}
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("masking %s read-only: %w", p, err)
		}
	}
	for _, p := range cfg.maskDirs {
		err := unix.Mount("rein-mask", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("masking %s: %w", p, err)
		}
	}
	// Protected paths: bound over themselves, then made read-only, so a
	// command (a script the analyzer never saw) cannot plant a hook or a
	// config key that runs later outside the sandbox. A rename onto one
	// fails too (EBUSY): git's config.lock cannot replace .git/config.
	for _, p := range cfg.ro {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("protecting %s: %w", p, err)
		}
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("protecting %s read-only: %w", p, err)
		}
	}
	return nil
}
