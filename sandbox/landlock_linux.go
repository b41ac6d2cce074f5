//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockState is what a Landlock sets up at its first Exec.
type landlockState struct {
	helper  string
	workDir string   // resolved
	tmp     string   // the private temp dir
	netns   string   // rein's own network namespace, "dev:ino"
	netnsF  *os.File // as root: the sandbox's network namespace, made once; nil: one per command
	ruleset *os.File // the commands' Landlock ruleset, built once
	// zygoteRuleset is the zygote's: the commands' grants and the helper
	// binary, which the zygote is exec'd from and commands may not run.
	zygoteRuleset *os.File
	cgroups       string     // base for per-command pids cgroups, or ""
	memcg         string     // base for per-command memory cgroups, or "" (no limit)
	masks         masks      // credential files and directories hidden from commands
	maskDir       string     // holds maskSrc
	locks         []*os.File // held on tmp, maskDir and stageRoot until they are removed (sweepHeld)
	maskSrc       string     // the empty file mounted over masked files
	attr          syscall.SysProcAttr

	zmu      sync.Mutex // guards zyg and restarts, and is held while one starts
	zyg      *zygote    // nil until the first command, or after Close
	restarts int        // zygotes started to replace a dead one
	dead     error      // set once the executor gave up: ErrExecutorDead

	// stageRoot holds the staged commands' upper dirs, "" when commands
	// are not staged (Landlock.Stage off, or no overlay here: stageErr).
	stage     bool // asked for
	stageRoot string
	stageErr  error
	stageMu   sync.Mutex  // held for a staged command's life
	stageOff  atomic.Bool // the stager could not mount: run unstaged
	// removing tracks stage dirs being removed in the background
	// (removeLater), waited for before the stage root goes.
	removing     sync.WaitGroup
	removingMu   sync.Mutex
	removingDone bool // release began: remove at once
	// free holds stage dirs of commands that wrote nothing, cleared for
	// the next command (recycle), under removingMu.
	free   []StageDir
	net    string       // the network policy: NetNone or NetProxy
	egress *egressState // the proxy's listener and server, under NetProxy
	// base brings baseGrants, walked while the masks are found; build
	// takes it.
	base <-chan []grant
}

// systemDirs are readable and executable inside the sandbox, where they
// exist.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix/store"}

// devices are readable and writable inside the sandbox.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// Exec runs c.Script with the shell inside the sandbox. See Landlock and
// Executor for what it guarantees. A Cmd.Dir outside WorkDir is refused
// with ErrInvalid; a sandbox that cannot be set up, with ErrStart.
func (l *Landlock) Exec(ctx context.Context, c Cmd) (Result, error) {
	c, err := prepare(c)
	if err != nil {
		return Result{}, err
	}
	st, err := l.setup()
	if err != nil {
		return Result{}, err
	}
	defer l.inflight.Done()
	dir := filepath.Clean(c.Dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if !within(dir, st.workDir) {
		return Result{}, fmt.Errorf("%w: directory %s is outside the work dir %s", ErrInvalid, c.Dir, st.workDir)
	}

	if !filepath.IsAbs(shellOr(l.Shell)) {
		return Result{}, fmt.Errorf("%w: shell %q is not an absolute path", ErrStart, l.Shell)
	}
	shell := runRequest{
		dir:  c.Dir,
		path: shellOr(l.Shell),
		argv: []string{shellOr(l.Shell), "-c", c.Script},
		env:  st.commandEnv(c.Env),
	}
	if argv, env := l.direct(c.Script, shell.env, c.Dir, dir); argv != nil {
		res, err := l.run(ctx, c, st, runRequest{dir: c.Dir, path: argv[0], argv: argv[1:], env: env})
		if !errors.Is(err, errExecFailed) {
			return res, err
		}
		if res.Staged != nil {
			_ = res.Staged.Discard() // nothing ran: nothing was staged
		}
		// Not runnable in the sandbox after all (a directory Landlock
		// does not let it execute from, a missing interpreter): the shell
		// runs it and says why, as it would have.
	}
	return l.run(ctx, c, st, shell)
}

// run runs req for c: through a helper of its own (PerCommand), staged,
// or through the zygote.
func (l *Landlock) run(ctx context.Context, c Cmd, st *landlockState, req runRequest) (Result, error) {
	staging := st.stageRoot != "" && !st.stageOff.Load() // no stage root with PerCommand
	if c.MustStage && !staging {
		return Result{}, fmt.Errorf("%w: %w", ErrNotStaged, l.notStaging(st))
	}
	if l.PerCommand {
		return l.execHelper(ctx, c, st, req)
	}
	if staging {
		return l.execStaged(ctx, c, st, req)
	}
	for retried := false; ; retried = true {
		z, err := st.zygoteFor(ctx, l)
		if err != nil {
			return Result{}, err
		}
		res, err := z.exec(ctx, c, req, l.MaxOutput, graceOr(l.Grace))
		if errors.Is(err, errNotSent) && !retried {
			continue // the zygote died while idle; nothing ran: once more on a new one
		}
		return res, err
	}
}

// Warm starts the zygote in the background, so that the session's first
// command does not wait for its start (a model's first turn is longer
// than that). A session that may sit idle for long (rein serve) should not
// call it: the zygote is a process held for the session's life. A failed
// start is not an error here: the first command starts it again and says
// why. Close stops a start in progress. Nothing to do with PerCommand.
func (l *Landlock) Warm(ctx context.Context) {
	if l.PerCommand {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		cancel()
		return
	}
	l.unwarm = cancel
	l.inflight.Add(1) // before Close can wait: l.closed was false under l.mu
	l.mu.Unlock()
	go func() {
		defer l.inflight.Done()
		defer cancel()
		if l.Hold != nil {
			select {
			case <-l.Hold:
			case <-ctx.Done(): // Close, or the caller gave up
				return
			}
		}
		st, err := l.setup() // waits for Prepare's build
		if err != nil {
			return
		}
		defer l.inflight.Done()
		_, _ = st.zygoteFor(ctx, l)
	}()
}

// zygoteFor returns st's zygote, starting one at the first command and
// after one died, at most l.Restarts times: then, or when a restart fails,
// the executor is dead (ErrExecutorDead).
func (st *landlockState) zygoteFor(ctx context.Context, l *Landlock) (*zygote, error) {
	st.zmu.Lock()
	defer st.zmu.Unlock()
	if st.zyg != nil && st.zyg.alive() {
		return st.zyg, nil
	}
	if st.dead != nil {
		return nil, st.dead
	}
	restart := st.zyg != nil || st.restarts > 0
	if st.zyg != nil {
		why := st.zyg.deadErr()
		st.zyg.stop()
		st.zyg = nil
		if st.restarts >= l.restarts() {
			st.dead = fmt.Errorf("%w: the landlock zygote died again after %d restart(s) (%w); no command can run", ErrExecutorDead, st.restarts, why)
			return nil, st.dead
		}
		st.restarts++
	}
	z, err := st.startZygote(ctx, l)
	if err != nil {
		if restart && !errors.Is(err, ErrAborted) {
			st.dead = fmt.Errorf("%w: restarting the landlock zygote failed: %w", ErrExecutorDead, err)
			return nil, st.dead
		}
		return nil, err
	}
	st.zyg = z
	return z, nil
}

// execHelper runs req for c the way every command ran before the zygote:
// through a helper of its own (Landlock.PerCommand).
func (l *Landlock) execHelper(ctx context.Context, c Cmd, st *landlockState, req runRequest) (res Result, err error) {
	cfg := helperConfig{
		statusFD:  3,
		net:       st.net,
		netns:     st.netns,
		nproc:     int64(l.maxProcs()),
		fsize:     l.maxFileSize(),
		argv:      req.argv,
		path:      req.path,
		maskFiles: st.masks.files,
		maskDirs:  st.masks.dirs,
		ro:        st.masks.ro,
		maskSrc:   st.maskSrc,
	}
	spec := &spawnSpec{
		env:       encodeEnv(req.env),
		maxOutput: l.MaxOutput,
		grace:     graceOr(l.Grace),
		attr:      st.attr,
		status:    true,
	}
	if st.cgroups != "" {
		cg, err := newCommandCgroup(st, l)
		if err != nil {
			return Result{}, fmt.Errorf("%w: %w", ErrStart, err)
		}
		defer cg.remove()
		cfg.cgroup = cg.dir
		if cg.mem != cg.dir {
			cfg.memcg = cg.mem
		}
		spec.afterKill = cg.killAll
		defer cg.noteOOM(&res)
	}
	// The child's descriptors: 3 the status pipe, 4 the ruleset, 5 the
	// network namespace.
	cfg.rulesetFD = 4
	spec.files = []*os.File{st.ruleset}
	if st.netnsF != nil {
		cfg.netnsFD = 5
		spec.files = append(spec.files, st.netnsF)
	}
	spec.argv = append([]string{st.helper, HelperArg}, helperArgs(cfg)...)

	res, status, err := run(ctx, c, spec)
	if err != nil {
		return res, err
	}
	if err := helperStatus(status, st.helper, res); err != nil {
		return Result{}, err
	}
	return res, nil
}

// Close waits for the commands still running, then removes the private
// temp dir and lets go of the ruleset and the network namespace. An Exec
// after Close fails with ErrStart.
func (l *Landlock) Close() error {
	l.mu.Lock()
	l.closed = true
	st, b := l.state, l.building
	l.state, l.building = nil, nil
	if l.unwarm != nil {
		l.unwarm()
	}
	l.mu.Unlock()
	if b != nil {
		b.stop() // the walks stop; nothing is built
		b.need()
	}
	l.inflight.Wait()
	var errs []error
	if b != nil && b.st != nil { // built, never taken
		errs = append(errs, b.st.release())
	}
	if st != nil {
		errs = append(errs, st.release())
	}
	return errors.Join(errs...)
}

// build makes what every command of the executor shares: the private
// temp dir, the Landlock ruleset and, as root, the network namespace.
func (st *landlockState) build(root bool) error {
	st.attr = namespaceAttr(root)
	if root && st.netnsF == nil {
		f, err := newNetns()
		if err != nil {
			return err
		}
		st.netnsF = f
	}
	tmp, lock, err := makeHeld("sandbox")
	if err != nil {
		return fmt.Errorf("private temp dir: %w", err)
	}
	st.tmp, st.locks = tmp, append(st.locks, lock) // from here on, release removes it
	real, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		return fmt.Errorf("private temp dir: %w", err)
	}
	st.tmp = real
	for _, d := range []string{"home", "cache"} {
		if err := os.Mkdir(filepath.Join(st.tmp, d), 0o700); err != nil {
			return fmt.Errorf("private temp dir: %w", err)
		}
	}
	if !st.masks.empty() {
		if st.maskDir, st.maskSrc, lock, err = newMaskSource(); lock != nil {
			st.locks = append(st.locks, lock)
		}
		if err != nil {
			return fmt.Errorf("the empty file to mask credentials with: %w", err)
		}
		st.attr.Cloneflags |= syscall.CLONE_NEWNS // the masks are the helper's alone
	}
	grants := systemGrants(<-st.base, st.workDir, st.tmp)
	var ports []uint16
	if st.net == NetProxy {
		ports = []uint16{ProxyPort}
	}
	fd, err := newRuleset(grants, ports...)
	if err != nil {
		return err
	}
	st.ruleset = os.NewFile(uintptr(fd), "landlock-ruleset")
	zgrants := append(grants, grant{grantRX, st.helper})
	if st.stage {
		if st.stageErr = st.initStage(); st.stageErr == nil {
			// The zygote's domain must let its commands use each new
			// overlay, whose root no rule can name in advance: it grants
			// the work dir's parent (see overlayRule).
			zgrants = append(zgrants, grant{grantRW, filepath.Dir(st.workDir)})
		}
	}
	if fd, err = newRuleset(zgrants, ports...); err != nil {
		return err
	}
	st.zygoteRuleset = os.NewFile(uintptr(fd), "landlock-zygote-ruleset")
	return nil
}

// release undoes build, after stopping the zygote.
func (st *landlockState) release() error {
	st.zmu.Lock()
	if st.zyg != nil {
		st.zyg.stop()
		st.zyg = nil
	}
	st.zmu.Unlock()
	_ = st.egress.stop()
	if st.zygoteRuleset != nil {
		_ = st.zygoteRuleset.Close()
	}
	if st.netnsF != nil {
		_ = st.netnsF.Close()
	}
	if st.ruleset != nil {
		_ = st.ruleset.Close()
	}
	_ = removeMaskSource(st.maskDir)
	st.releaseStage()
	if st.tmp == "" {
		for _, l := range st.locks {
			l.Close()
		}
		return nil
	}
	// A command may have left directories without write permission.
	_ = filepath.WalkDir(st.tmp, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	err := os.RemoveAll(st.tmp)
	for _, l := range st.locks { // after the removals: no sweep takes a dir still in use
		l.Close()
	}
	return err
}

// systemGrants lists what the sandbox may use: base (baseGrants: the
// system directories, the world-readable parts of /etc, /proc, the
// devices), the work dir and the temp dir.
func systemGrants(base []grant, work, tmp string) []grant {
	return append(base, grant{grantRW, work}, grant{grantRW, tmp})
}

// namespaceAttr returns how the helper is started: in a new session and,
// unless rein is root, in a new user namespace with rein's uid and gid
// mapped to themselves and a new network namespace it owns. As root the
// helper enters the network namespace newNetns made once instead:
// making one per command costs milliseconds, and more when the kernel is
// still tearing down the last ones.
func namespaceAttr(root bool) syscall.SysProcAttr {
	attr := syscall.SysProcAttr{Setsid: true}
	if !root {
		uid, gid := os.Geteuid(), os.Getegid()
		attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	return attr
}

// newNetns makes a new network namespace and returns it open. A thread of
// its own unshares into it, opens it and is thrown away (never unlocked,
// so the Go runtime ends it): no thread that runs anything else of rein
// ever leaves rein's namespace, and no process is started for it.
func newNetns() (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	onOwnThread(func() {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("new network namespace: %w", err)}
			return
		}
		f, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			err = fmt.Errorf("new network namespace: %w", err)
		}
		ch <- result{f, err}
	})
	r := <-ch
	return r.f, r.err
}

// netnsID identifies the network namespace at path as "dev:ino".
func netnsID(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", fmt.Errorf("network namespace: %w", err)
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino), nil
}

// landlockABI returns the Landlock ABI this kernel offers, 0 for none. Like
// go-landlock, it counts ABI 6 as 5 where the signal-scoping fix (erratum
// 2) is missing.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	if v >= 6 {
		if e, err := ll.LandlockGetErrata(); err != nil || e&0x2 == 0 {
			v = 5
		}
	}
	return v
}

// LandlockStatus reports whether the landlock backend works on this
// machine: the Landlock ABI the kernel offers, and nil, or an error
// wrapping ErrUnsupported that says what is missing (Landlock, an ABI of at
// least MinLandlockABI, seccomp, or the namespaces the helper is started in).
// It starts one short process to try the namespaces.
func LandlockStatus() (abi int, err error) {
	abi = landlockABI()
	switch {
	case abi == 0:
		return 0, fmt.Errorf("%w: Landlock is not enabled in this kernel", ErrUnsupported)
	case abi < MinLandlockABI:
		return abi, fmt.Errorf("%w: Landlock ABI %d, the landlock backend needs %d (Linux 6.12 or later)", ErrUnsupported, abi, MinLandlockABI)
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return abi, fmt.Errorf("%w: seccomp: %w", ErrUnsupported, err)
	}
	if os.Geteuid() == 0 {
		f, err := newNetns()
		if err != nil {
			return abi, fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		f.Close()
		return abi, nil
	}
	attr := namespaceAttr(false)
	probe := exec.Command(shellOr(""), "-c", "exit 0")
	probe.SysProcAttr = &attr
	probe.Env = []string{}
	if err := probe.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return abi, fmt.Errorf("%w: no shell: %w", ErrUnsupported, err)
		}
		return abi, fmt.Errorf("%w: cannot start a process in a new network namespace: %w", ErrUnsupported, err)
	}
	return abi, nil
}

// newCommandCgroup makes a command's cgroup: pids.max, and the memory
// limit where st found a memory controller.
func newCommandCgroup(st *landlockState, l *Landlock) (*pidsCgroup, error) {
	return newCgroup(st, l, l.maxProcs())
}

// newCgroup makes a cgroup with pids.max = procs, and the memory limit
// where st found a memory controller.
func newCgroup(st *landlockState, l *Landlock, procs int) (*pidsCgroup, error) {
	cg, err := newPidsCgroup(st.cgroups, procs)
	if err != nil {
		return nil, err
	}
	if st.memcg != "" {
		if err := cg.limitMemory(st.memcg, l.memory()); err != nil {
			cg.remove()
			return nil, err
		}
	}
	return cg, nil
}

// noteOOM marks res as killed for reaching the memory limit when the
// cgroup's OOM killer struck; c may be nil.
func (c *pidsCgroup) noteOOM(res *Result) {
	if c != nil && c.oomKilled() {
		res.OOMKilled, res.MemoryLimit = true, c.memLimit
	}
}

// commandEnv is a command's environment: env as the sandbox forces it
// (landlockInside), with the proxy's variables under NetProxy.
func (st *landlockState) commandEnv(env []string) []string {
	env = landlockInside(st.tmp).forInside(env)
	if st.net == NetProxy {
		env = ProxyEnv(env, proxyAddr())
	}
	return env
}
