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
	stageMu   sync.Mutex   // held for a staged command's life
	stageOff  atomic.Bool  // the stager could not mount: run unstaged
	net       string       // the network policy: NetNone or NetProxy
	egress    *egressState // the proxy's listener and server, under NetProxy
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
	if l.PerCommand {
		return l.execHelper(ctx, c, st)
	}
	req := runRequest{
		dir:  c.Dir,
		argv: []string{shellOr(l.Shell), "-c", c.Script},
		env:  st.commandEnv(c.Env),
	}
	if st.stageRoot != "" && !st.stageOff.Load() {
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

// Prepare makes sure the backend works here and starts building what
// every command shares (the rulesets, the credential masks, the private
// temp dir), so that the check's work is not thrown away (LandlockStatus
// builds a namespace only to close it).
//
// What this machine or the settings can refuse is checked before Prepare
// returns: Landlock's ABI, user namespaces (not root) or seccomp and the
// network namespace, with the egress proxy in it (root), the network
// policy, the work dir and the helper. The rest — the walks of the work dir
// for credential files and of /etc for unreadable ones, the rulesets, the
// temp dirs — is built in the background, once Hold lets it, while the
// caller goes on to its first model request; a command, Warm and StageErr
// wait for it, and a failure there is the first command's error (ErrStart);
// the next command builds again. Close stops a build in progress. The
// zygote still starts at the first command unless Warm is called: started
// here, every idle session of a server would keep a process of its own.
func (l *Landlock) Prepare(ctx context.Context) error {
	root := os.Geteuid() == 0
	if !root {
		// Not root: each command gets a user namespace; probe that one can
		// be made (the state below builds none).
		if _, err := LandlockStatus(); err != nil {
			return err
		}
	} else if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("%w: seccomp: %w", ErrUnsupported, err)
	}
	set, err := l.settings()
	if err != nil {
		return err
	}
	if root {
		// The executor's network namespace, and the proxy in it, are made
		// now: a machine that refuses them refuses the backend here, where
		// --sandbox auto can still choose another.
		if err := set.network(l.Egress); err != nil {
			return err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.state != nil || l.building != nil {
		set.release()
		if l.closed {
			return fmt.Errorf("%w: the landlock executor is closed", ErrStart)
		}
		return nil
	}
	l.startBuild(set, l.Hold)
	return nil
}

// stateBuild is a build of the executor's shared state in the background.
type stateBuild struct {
	now     chan struct{} // closed when the state is needed: build now
	nowOnce sync.Once
	stop    context.CancelFunc // Close: stop the walks, build nothing
	done    chan struct{}      // closed when st or err is set
	st      *landlockState
	err     error
}

// need starts the build if Hold still holds it back.
func (b *stateBuild) need() { b.nowOnce.Do(func() { close(b.now) }) }

// startBuild starts building the state for set in the background, once
// hold is closed (nil: at once) or a caller needs it. Called with l.mu
// held, with neither a state nor a build; set's namespace and proxy, if
// any, are the build's from here on.
func (l *Landlock) startBuild(set landlockSettings, hold <-chan struct{}) {
	ctx, stop := context.WithCancel(context.Background())
	b := &stateBuild{done: make(chan struct{}), now: make(chan struct{}), stop: stop}
	l.building = b
	l.inflight.Add(1) // Close waits for the build
	go func() {
		defer l.inflight.Done()
		defer close(b.done)
		defer stop()
		select {
		case <-hold: // nil: never, and b.now decides
		case <-b.now:
		}
		if ctx.Err() != nil {
			set.release()
			b.err = fmt.Errorf("%w: the landlock executor is closed", ErrStart)
			return
		}
		b.st, b.err = l.buildState(ctx, set)
	}()
	if hold == nil {
		b.need()
	}
}

// built waits for the build in progress, if any, and returns the
// executor's state, nil if there is none; a failed build's error is
// returned once, to the first caller. Called without l.mu.
func (l *Landlock) built() (*landlockState, error) {
	l.mu.Lock()
	b := l.building
	l.mu.Unlock()
	if b != nil {
		b.need()
		<-b.done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b != nil && l.building == b { // not taken by another caller or Close
		l.building = nil
		if b.err != nil {
			return nil, b.err
		}
		if l.state != nil { // cannot happen: a build starts only without a state
			_ = b.st.release()
		} else {
			l.state = b.st
		}
	}
	return l.state, nil
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

// execHelper runs c the way every command ran before the zygote: through a
// helper of its own (Landlock.PerCommand).
func (l *Landlock) execHelper(ctx context.Context, c Cmd, st *landlockState) (res Result, err error) {
	cfg := helperConfig{
		statusFD:  3,
		net:       st.net,
		netns:     st.netns,
		nproc:     int64(l.maxProcs()),
		fsize:     l.maxFileSize(),
		argv:      []string{shellOr(l.Shell), "-c", c.Script},
		maskFiles: st.masks.files,
		maskDirs:  st.masks.dirs,
		ro:        st.masks.ro,
		maskSrc:   st.maskSrc,
	}
	spec := &spawnSpec{
		env:       encodeEnv(st.commandEnv(c.Env)),
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

// setup returns the executor's state, building it (or waiting for the
// build Prepare started) at the first call. On success the caller is
// counted in l.inflight and must call l.inflight.Done.
func (l *Landlock) setup() (*landlockState, error) {
	for {
		if _, err := l.built(); err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return nil, fmt.Errorf("%w: the landlock executor is closed", ErrStart)
		}
		if st := l.state; st != nil {
			l.inflight.Add(1)
			l.mu.Unlock()
			return st, nil
		}
		if l.building == nil {
			set, err := l.settings()
			if err != nil {
				l.mu.Unlock()
				return nil, err
			}
			l.startBuild(set, nil) // built() waits for it, l.mu free: Close can stop it
		}
		l.mu.Unlock()
	}
}

// landlockSettings is what settings checked, for buildState, and as
// root what Prepare made early: the network namespace and the proxy in it.
type landlockSettings struct {
	net, work, helper, netns string
	netnsF                   *os.File
	egress                   *egressState
}

// network makes the executor's network namespace (root) and, under
// NetProxy, starts the egress proxy in it.
func (set *landlockSettings) network(srv EgressServer) error {
	f, err := newNetns()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStart, err)
	}
	set.netnsF = f
	if set.net == NetProxy {
		if set.egress, err = startEgress(f, srv); err != nil {
			set.release()
			return fmt.Errorf("%w: %w", ErrStart, err)
		}
	}
	return nil
}

// release undoes network, for settings no state took.
func (set *landlockSettings) release() {
	_ = set.egress.stop()
	if set.netnsF != nil {
		_ = set.netnsF.Close()
	}
	set.egress, set.netnsF = nil, nil
}

// settings checks what the caller and this machine decide, cheaply: the
// network policy, the work dir, the helper, the Landlock ABI.
func (l *Landlock) settings() (landlockSettings, error) {
	net := NetNone
	switch l.Net {
	case "", NetNone:
	case NetProxy:
		if l.Egress == nil {
			return landlockSettings{}, fmt.Errorf("%w: network policy %q without an egress proxy", ErrInvalid, l.Net)
		}
		net = NetProxy
	default:
		return landlockSettings{}, fmt.Errorf("%w: network policy %q (use \"none\" or \"proxy\")", ErrInvalid, l.Net)
	}
	if !filepath.IsAbs(l.WorkDir) {
		return landlockSettings{}, fmt.Errorf("%w: work dir %q is not absolute", ErrInvalid, l.WorkDir)
	}
	work, err := filepath.EvalSymlinks(l.WorkDir)
	if err != nil {
		return landlockSettings{}, fmt.Errorf("%w: work dir: %w", ErrStart, err)
	}
	if fi, err := os.Stat(work); err != nil || !fi.IsDir() {
		return landlockSettings{}, fmt.Errorf("%w: work dir %s is not a directory", ErrStart, work)
	}
	if home, err := os.UserHomeDir(); err == nil {
		if err := checkWorkDir(work, home); err != nil {
			return landlockSettings{}, err
		}
		if real, err := filepath.EvalSymlinks(home); err == nil {
			if err := checkWorkDir(work, real); err != nil {
				return landlockSettings{}, err
			}
		}
	} else if err := checkWorkDir(work, ""); err != nil {
		return landlockSettings{}, err
	}
	helper := l.Helper
	if helper == "" {
		if helper, err = os.Executable(); err != nil {
			return landlockSettings{}, fmt.Errorf("%w: finding the sandbox helper: %w", ErrStart, err)
		}
	}
	if helper, err = filepath.Abs(helper); err != nil {
		return landlockSettings{}, fmt.Errorf("%w: the sandbox helper: %w", ErrStart, err)
	}
	netns, err := netnsID("/proc/self/ns/net")
	if err != nil {
		return landlockSettings{}, fmt.Errorf("%w: %w", ErrStart, err)
	}
	if abi := landlockABI(); abi < MinLandlockABI {
		return landlockSettings{}, fmt.Errorf("%w: Landlock ABI %d, need at least %d", ErrStart, abi, MinLandlockABI)
	}
	return landlockSettings{net: net, work: work, helper: helper, netns: netns}, nil
}

// buildState builds what every command shares, for settings set; it
// stops, and builds nothing, when ctx ends.
func (l *Landlock) buildState(ctx context.Context, set landlockSettings) (*landlockState, error) {
	st := &landlockState{helper: set.helper, workDir: set.work, netns: set.netns, net: set.net, cgroups: findPidsCgroup(),
		netnsF: set.netnsF, egress: set.egress} // from here on, st.release releases them
	if st.cgroups != "" {
		sweepCgroups(st.cgroups)
		if l.memory() > 0 {
			if st.memcg = findMemoryCgroup(); st.memcg != "" && st.memcg != st.cgroups {
				sweepCgroups(st.memcg)
			}
		}
	}
	sweepHeld() // what killed reins left
	home, _ := os.UserHomeDir()
	st.masks = findMasks(ctx, st.workDir, home)
	if ctx.Err() != nil { // the walk stopped short: these masks are not all
		_ = st.release()
		return nil, fmt.Errorf("%w: the landlock executor is closed", ErrStart)
	}
	if n := st.masks.count(); n > maxMasks {
		_ = st.release()
		return nil, fmt.Errorf("%w: the work dir has %d credential files and protected paths to mask, more than %d; use a smaller --workdir", ErrStart, n, maxMasks)
	}
	st.stage = l.Stage && !l.PerCommand
	if err := st.build(os.Geteuid() == 0); err != nil {
		_ = st.release()
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	if st.net == NetProxy && st.egress == nil {
		var err error
		if st.egress, err = startEgress(st.netnsF, l.Egress); err != nil {
			_ = st.release()
			return nil, fmt.Errorf("%w: %w", ErrStart, err)
		}
	}
	return st, nil
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
	grants := systemGrants(st.workDir, st.tmp)
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

// systemGrants lists what the sandbox may use: the system directories,
// the world-readable parts of /etc, /proc, the devices, the work dir and
// the temp dir.
func systemGrants(work, tmp string) []grant {
	return append(baseGrants(), grant{grantRW, work}, grant{grantRW, tmp})
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
