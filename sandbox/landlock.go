package sandbox

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HelperArg is the first argument that makes a rein binary act as the
// landlock helper: its main must call HelperMain(os.Args[2:]) when
// IsHelper() reports true, before anything else.
const HelperArg = "__rein-sandbox-helper"

// IsHelper reports whether this process was started as the landlock helper.
func IsHelper() bool { return len(os.Args) > 1 && os.Args[1] == HelperArg }

// MinLandlockABI is the oldest Landlock ABI the landlock backend runs on
// (Linux 6.12). ABI 6 is the first that keeps a sandboxed process from
// signalling processes outside the sandbox; below it a command could kill
// any process of rein's user, so the backend reports itself unavailable
// rather than run with that hole.
const MinLandlockABI = 6

// Limits the landlock backend applies when its settings leave them zero.
const (
	// DefaultMaxProcs bounds the tasks (processes and threads) of one
	// command: enough for a parallel `go build`, far too few to exhaust a
	// host.
	DefaultMaxProcs = 4096
	// DefaultMaxFileSize bounds the size of any one file a command writes
	// (RLIMIT_FSIZE).
	DefaultMaxFileSize = 1 << 30
)

// Landlock runs commands like Local, but inside a sandbox that the kernel
// enforces. At its first command the executor starts a zygote: rein
// re-executes itself (Helper) as a small helper in a new network namespace;
// the helper drops every capability, sets no_new_privs, applies a Landlock
// ruleset and a seccomp filter to itself, and execs the rein binary again
// as the zygote, which is thus confined from its first instruction. For
// each command the zygote forks a child that enters a nested Landlock
// domain of its own before it execs the shell, so the command inherits
// every restriction and is fenced off from the zygote (no thread of which
// shares its domain) and from the other commands; nothing unconfined ever
// forks a command. rein passes the
// command's stdin, stdout and stderr over a socket whose descriptor no
// command holds. The process-group kill, the timeout, the output capture
// and the cgroup are rein's, as for Local; a zygote that dies is replaced at
// the next command, and the command it was running fails with ErrStart and
// is killed. PerCommand goes back to one helper per command.
//
// Inside, a command can:
//   - read and execute the system directories (/usr, /bin, /sbin, /lib*,
//     /opt), which hold the shell, the tools and the Go toolchain;
//   - read what an ordinary user can read of /etc: each part of /etc that is
//     world-readable. /etc/shadow, /etc/gshadow, /etc/sudoers and private
//     keys (mode 0600/0640) stay unreadable even to root inside, because
//     Landlock grants only what is listed;
//   - read /proc (read-only). Landlock refuses /proc/<pid>/environ, mem,
//     root and the descriptors in fd of any process outside the sandbox, so
//     only what /proc shows every user (command lines, status, descriptor
//     numbers) is visible of the host's processes;
//   - read, write and execute in WorkDir and in a private temp dir (TMPDIR,
//     HOME, GOCACHE and GOPATH point there), created at the first Exec and
//     removed by Close;
//   - use /dev/null, /dev/zero, /dev/full, /dev/random and /dev/urandom.
//
// Everything else is out of reach: the user's home, so credential
// directories like ~/.ssh and ~/.aws (a WorkDir that contains them is
// refused), other files, other writes. Descriptors rein holds open are closed
// at the exec; only stdin, stdout and stderr reach the command.
//
// Network (Net "none"): no socket of any network family can be made
// (seccomp), the command runs in a network namespace whose only interface is
// a loopback that is down, and Landlock refuses TCP bind and connect; name
// lookups fail. Signals and abstract unix sockets cannot reach a process
// outside the sandbox (Landlock scopes). AF_UNIX sockets are refused too,
// because before Landlock ABI 9 nothing else would stop a command from
// connecting to the Docker socket or the user's D-Bus or ssh-agent;
// socketpair still works. From ABI 9 on, Landlock confines AF_UNIX
// connections to sockets made inside the sandbox, and socket(AF_UNIX) is
// allowed.
//
// Seccomp also denies ptrace, process_vm_readv/writev, mount and the new
// mount API, kexec, bpf, keyrings, new namespaces (unshare and clone with a
// CLONE_NEW* flag; clone3 is answered ENOSYS, so libc falls back to clone),
// setns, modules, reboot, swap, syslog, io_uring (which could open sockets
// without socket(2)), perf_event_open, userfaultfd, open_by_handle_at and
// pidfd_getfd, and every system call made through a foreign ABI (int 0x80,
// x32).
//
// Limits: the executor's zygote and its commands live in one cgroup of
// their own (cgroup v2, or the v1 pids and memory hierarchies) when rein
// can create one there (as root), with pids.max = MaxProcs+1 (the zygote)
// and the Memory limit: so the limits hold per executor, shared by
// commands that run at the same time, and no process ever moves between
// cgroups (a move waits for an RCU grace period, milliseconds per command
// when commands are spaced as in a session). When a command ends and no
// other runs, everything else left in that cgroup is killed, even what
// left the process group or session; while another command runs,
// leftovers wait for it to end. Otherwise
// RLIMIT_NPROC bounds it (rein not root: the zygote runs in a user
// namespace, where the count is the sandbox's own, shared by the zygote and
// every command of the executor; PerCommand makes it each command's own). As root without a writable pids cgroup there is no task
// limit but the timeout. RLIMIT_FSIZE caps each file at MaxFileSize; total
// disk use is not capped (WorkDir is on the user's disk anyway). Core dumps
// are off.
//
// Users: as root, the helper enters a network namespace the executor made
// once (one per command would cost milliseconds each); it keeps uid 0 but
// drops every capability (bounding set included), so it cannot mount,
// trace, chown, load modules or override file permissions, and with
// no_new_privs no setuid binary gives them back. As another user it is
// started in a new user namespace (its uid and gid mapped to themselves)
// that owns a new network namespace, and loses the namespace's capabilities
// at the exec; the executor's commands share the zygote's namespaces. The
// Landlock rulesets (the commands', and the zygote's, which adds the rein
// binary) are built once per executor.
//
// The helper has no controlling terminal (it starts a new session), and
// /dev/tty is not granted, so a command cannot push keystrokes into the
// user's terminal. No PID namespace is used (see HelperMain).
//
// Exec fails closed: if the helper cannot apply every restriction (a
// kernel without Landlock ABI MinLandlockABI, a netns that cannot be made,
// a helper binary that does not call HelperMain), or the zygote does not
// find itself confined, the command does not run and Exec returns an error
// wrapping ErrStart. LandlockStatus says in
// advance whether the backend works here.
//
// Set the fields before the first Exec and do not change them after. A
// Landlock is safe for concurrent use; Close it when done (Close waits for
// the commands still running).
type Landlock struct {
	// Helper is the path of a binary whose main calls HelperMain when
	// IsHelper(); empty means this program (os.Executable).
	Helper string
	// WorkDir is the absolute directory commands may read and write.
	// Cmd.Dir must lie inside it.
	WorkDir string
	// Net is the network policy: NetNone ("none", or empty): no network
	// at all; NetProxy ("proxy"): only through Egress, which rein serves on
	// 127.0.0.1:ProxyPort inside the sandbox's network namespace, with
	// HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY set in every
	// command's environment. With NetProxy a command may make IP sockets,
	// but Landlock lets it connect to ProxyPort alone, and the namespace
	// holds nothing but the loopback and the proxy's listener. NetProxy
	// needs rein to run as root (rein enters the namespace to listen in
	// it) and an Egress.
	Net string
	// Egress serves the proxy of NetProxy; it must be set then, and is
	// ignored otherwise.
	Egress EgressServer
	// Shell, MaxOutput and Grace are as in Local.
	Shell     string
	MaxOutput int
	Grace     time.Duration
	// MaxProcs bounds the tasks of one command; 0 means DefaultMaxProcs.
	MaxProcs int
	// MaxFileSize bounds the size of a file a command writes, in bytes;
	// 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// PerCommand runs each command through a helper process of its own
	// instead of the executor's zygote: about 4 ms more per command, and,
	// when rein is not root, a user namespace per command, so that
	// MaxProcs (RLIMIT_NPROC there) bounds each command alone rather than
	// all the executor's commands together.
	PerCommand bool
	// Memory bounds the memory of the executor's commands (all their
	// processes; one command's, when one runs at a time), in bytes, where rein can make a memory cgroup (cgroup v2 memory.max with
	// memory.swap.max 0, or v1 memory.limit_in_bytes and memsw): 0 means
	// DefaultMemory, a negative value no limit. A command that reaches it
	// is killed by the kernel's OOM killer and its Result says so
	// (OOMKilled); rein itself is outside the cgroup.
	Memory int64
	// Restarts is how many times a zygote that died is replaced; 0 means
	// DefaultRestarts. Past it, or when a restart fails, Exec returns
	// ErrExecutorDead: the sandbox cannot run commands any more.
	Restarts int
	// Stage runs each command with the work dir under an overlay, so that
	// its writes reach the work dir only when the caller applies them
	// (Result.Staged; see Staged). Staged commands of one executor run
	// one at a time. Where no overlay can be mounted (no overlayfs, a work
	// dir path overlayfs cannot name), commands run unstaged, as without
	// Stage, and StageErr says why. Not with PerCommand.
	Stage bool

	// Simple, when set, says which scripts are one simple command of
	// literal words (gate/cmdline.Simple). With bash as the shell, such a
	// command runs without it: its program is exec'd directly, with the
	// environment bash would give it, as `bash -c` itself would exec it,
	// less the shell's start (a millisecond or more a command). A program
	// that cannot be exec'd in the sandbox runs again through the shell,
	// which says why as it always has. A Shell whose name is not bash
	// keeps every script on the shell; one named bash is taken to be bash.
	// Nil: every script goes through the shell.
	Simple func(script string) ([]string, bool)

	// Hold, when set, holds back what Prepare and Warm start in the
	// background (building the shared state, starting the zygote) until
	// it is closed, or until a command or StageErr needs the state (Close
	// stops a held build instead).
	// rein closes it as the session's first model request goes out, so the
	// setup costs the model's think time instead of the user's wait
	// before that request. Nil: the work starts at once.
	Hold <-chan struct{}

	mu       sync.Mutex
	state    *landlockState // set up by Prepare or the first Exec
	building *stateBuild    // Prepare's build, until a caller takes it
	closed   bool
	inflight sync.WaitGroup     // Execs between setup and their end
	unwarm   context.CancelFunc // stops a Warm in progress (Close)
}

var _ Executor = (*Landlock)(nil)

// Name returns "landlock".
func (*Landlock) Name() string { return "landlock" }

func (l *Landlock) maxProcs() int {
	if l.MaxProcs > 0 {
		return l.MaxProcs
	}
	return DefaultMaxProcs
}

// DefaultMemory is the memory limit of one command.
const DefaultMemory = 2 << 30

func (l *Landlock) memory() int64 {
	if l.Memory != 0 {
		return l.Memory
	}
	return DefaultMemory
}

// DefaultRestarts is how many times an executor replaces a dead sandbox.
const DefaultRestarts = 1

func (l *Landlock) restarts() int {
	if l.Restarts > 0 {
		return l.Restarts
	}
	return DefaultRestarts
}

func (l *Landlock) maxFileSize() int64 {
	if l.MaxFileSize > 0 {
		return l.MaxFileSize
	}
	return DefaultMaxFileSize
}

// within reports whether path is dir or lies inside it; both are clean
// and absolute.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// checkWorkDir refuses a work dir that would open what the sandbox keeps
// closed: the check every backend shares (CheckWorkDir).
func checkWorkDir(dir, home string) error {
	_, err := CheckWorkDir(dir, home)
	return err
}

// envPrefix names the variables that carry the command's environment to
// the helper. The helper itself runs with nothing else, so no LD_PRELOAD,
// GODEBUG or the like in the command's environment can act on it before
// it has sandboxed itself.
const envPrefix = "REIN_SANDBOX_ENV_"

// encodeEnv wraps env for the helper: entry i becomes
// REIN_SANDBOX_ENV_<i>=<entry>.
func encodeEnv(env []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		out[i] = envPrefix + strconv.Itoa(i) + "=" + kv
	}
	return out
}

// decodeEnv unwraps what encodeEnv made, in order, ignoring every other
// variable. A gap or a duplicate in the numbering is an error.
func decodeEnv(environ []string) ([]string, error) {
	type entry struct {
		i  int
		kv string
	}
	var es []entry
	for _, v := range environ {
		rest, ok := strings.CutPrefix(v, envPrefix)
		if !ok {
			continue
		}
		num, kv, ok := strings.Cut(rest, "=")
		i, err := strconv.Atoi(num)
		if !ok || err != nil || i < 0 || strconv.Itoa(i) != num {
			return nil, fmt.Errorf("malformed sandbox environment variable %.40q", v)
		}
		es = append(es, entry{i, kv})
	}
	slices.SortFunc(es, func(a, b entry) int { return a.i - b.i })
	out := make([]string, len(es))
	for j, e := range es {
		if e.i != j {
			return nil, fmt.Errorf("sandbox environment: entry %d missing or repeated", j)
		}
		out[j] = e.kv
	}
	return out, nil
}
