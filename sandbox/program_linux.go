//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// Process is a Program running in the sandbox. Stdin and Stdout are the
// program's; close Stdin to tell it to end. Kill ends it (and everything it
// started) for good; a caller must call Kill (or see Done closed and then
// call Kill) so that the executor's Close does not wait for it.
type Process struct {
	Stdin  io.WriteCloser
	Stdout io.ReadCloser

	pgid    int
	done    chan struct{} // closed when the program has been reaped
	waitErr error
	cg      *pidsCgroup
	once    sync.Once
	release func()
	errW    *os.File // the read end of its stderr, copied to Program.Stderr
	copied  chan struct{}
}

// Done is closed when the program has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the program ended (exec.Cmd.Wait's error), once Done is
// closed; nil before.
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.waitErr
	default:
		return nil
	}
}

// Kill kills the program's process group and, where the executor has one,
// everything left in its cgroup (what left the group), waits for the
// program to be reaped and lets go of what the sandbox held for it. It is
// safe to call more than once and from several goroutines.
func (p *Process) Kill() {
	p.once.Do(func() {
		_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
		if p.cg != nil {
			p.cg.killAll()
		}
		<-p.done
		_ = p.Stdin.Close()
		_ = p.Stdout.Close()
		_ = p.errW.SetReadDeadline(time.Now()) // a process that escaped the group holds it
		<-p.copied
		_ = p.errW.Close()
		if p.cg != nil {
			p.cg.remove()
		}
		p.release()
	})
}

// Start starts prog inside the sandbox and returns at once, with the
// program running: the landlock executor's sandbox, through a helper of its
// own (never the zygote, which runs commands of bounded life), with
// Landlock, seccomp, the network namespace, the network policy and egress
// proxy of the executor, the credential masks, the limits and a cgroup of
// its own where rein can make one. What differs from a command is what it
// may touch: it reads and executes the system directories, the readable
// parts of /etc, /proc, the program file and prog.Read; it reads the
// executor's WorkDir but does not write it; it writes only prog.Dir, which
// is its HOME and TMPDIR.
//
// Start returns once the helper reported every restriction in force and
// exec'd the program, or with an error wrapping ErrStart saying why not
// (ErrInvalid for a Program it refuses as given). ctx bounds the start
// only; the program runs until Kill, or until it exits. Close waits for
// every program started to have been killed.
func (l *Landlock) Start(ctx context.Context, prog Program) (*Process, error) {
	home, _ := os.UserHomeDir()
	if err := checkProgram(prog, home); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(prog.Dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: program directory %s is not a directory", ErrInvalid, prog.Dir)
	}
	path, err := filepath.EvalSymlinks(prog.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: program %s: %w", ErrStart, prog.Path, err)
	}
	st, err := l.setup()
	if err != nil {
		return nil, err
	}
	released := false
	release := func() {
		if !released {
			released = true
			l.inflight.Done()
		}
	}
	p, err := st.start(ctx, l, prog, path, release)
	if err != nil {
		release()
		return nil, err
	}
	return p, nil
}

func (st *landlockState) start(ctx context.Context, l *Landlock, prog Program, path string, release func()) (*Process, error) {
	dir, err := filepath.EvalSymlinks(prog.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: program directory: %w", ErrStart, err)
	}
	grants := baseGrants()
	grants = append(grants, grant{grantR, st.workDir}, grant{grantRX, path})
	for _, r := range prog.Read {
		grants = append(grants, grant{grantRX, r})
	}
	grants = append(grants, grant{grantRW, dir})
	var ports []uint16
	if st.net == NetProxy {
		ports = []uint16{ProxyPort}
	}
	fd, err := newRuleset(grants, ports...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	ruleset := os.NewFile(uintptr(fd), "landlock-program-ruleset")
	defer ruleset.Close()

	env := prog.Env
	if env == nil {
		env = MinimalEnv()
	}
	env = Inside{Home: dir, TmpDir: dir}.forInside(env)
	if st.net == NetProxy {
		env = ProxyEnv(env, proxyAddr())
	}
	cfg := helperConfig{
		statusFD:  3,
		rulesetFD: 4,
		net:       st.net,
		netns:     st.netns,
		nproc:     int64(l.maxProcs()),
		fsize:     l.maxFileSize(),
		argv:      append([]string{path}, prog.Args...),
		maskFiles: st.masks.files,
		maskDirs:  st.masks.dirs,
		ro:        st.masks.ro,
		maskSrc:   st.maskSrc,
	}
	files := []*os.File{ruleset}
	if st.netnsF != nil {
		cfg.netnsFD = 5
		files = append(files, st.netnsF)
	}
	var cg *pidsCgroup
	if st.cgroups != "" {
		if cg, err = newCommandCgroup(st, l); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStart, err)
		}
		cfg.cgroup = cg.dir
		if cg.mem != cg.dir {
			cfg.memcg = cg.mem
		}
	}
	p, err := spawnProgram(ctx, st, prog, dir, append([]string{st.helper, HelperArg}, helperArgs(cfg)...), encodeEnv(env), files)
	if err != nil {
		if cg != nil {
			cg.killAll()
			cg.remove()
		}
		return nil, err
	}
	p.cg, p.release = cg, release
	return p, nil
}

// spawnProgram starts the helper for a program and waits for its status:
// every restriction in force and the program exec'd, or a failure.
func spawnProgram(ctx context.Context, st *landlockState, prog Program, dir string, argv, env []string, files []*os.File) (*Process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	attr := st.attr // Setsid: the program leads a group of its own
	attr.Pdeathsig = syscall.SIGKILL
	cmd := &exec.Cmd{
		Path: argv[0], Args: argv, Dir: dir, Env: env,
		Stdin: inR, Stdout: outW, Stderr: errW,
		ExtraFiles:  append([]*os.File{statusW}, files...),
		SysProcAttr: &attr,
	}
	p := &Process{Stdin: inW, Stdout: outR, errW: errR, done: make(chan struct{}), copied: make(chan struct{})}
	started := make(chan error, 1)
	// Pdeathsig fires when the thread that forked the program ends: this
	// goroutine keeps its thread for the program's life.
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(p.done)
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	err = <-started
	closeAll(inR, outW, errW, statusW) // the child has its copies
	if err != nil {
		closeAll(inW, outR, errR, statusR)
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	p.pgid = cmd.Process.Pid
	go func() {
		defer close(p.copied)
		w := prog.Stderr
		if w == nil {
			w = io.Discard
		}
		_, _ = io.Copy(w, errR)
	}()
	status := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(statusR, statusMax)) // EOF at the exec (close-on-exec) or the helper's end
		statusR.Close()
		status <- b
	}()
	fail := func(err error) (*Process, error) {
		p.release = func() {}
		p.Kill()
		return nil, err
	}
	var b []byte
	select {
	case b = <-status:
	case <-ctx.Done():
		statusR.Close()
		return fail(fmt.Errorf("%w: %w", ErrAborted, context.Cause(ctx)))
	}
	switch {
	case len(b) == 1 && b[0] == statusReady:
		return p, nil
	case len(b) > 0 && b[0] == statusFailed:
		return fail(fmt.Errorf("%w: sandbox: %s", ErrStart, b[1:]))
	case len(b) > 1 && b[0] == statusReady && b[1] == statusFailed:
		return fail(fmt.Errorf("%w: sandbox: %s", ErrStart, b[2:]))
	}
	return fail(fmt.Errorf("%w: %s did not act as the sandbox helper (does its main call sandbox.HelperMain when sandbox.IsHelper()?)", ErrStart, argv[0]))
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			_ = f.Close()
		}
	}
}

// baseGrants are what both commands and programs may use: the system
// directories, the world-readable parts of /etc, /proc and the devices.
func baseGrants() []grant {
	var gs []grant
	var seen []string
	for _, d := range systemDirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		dup := false
		for _, s := range seen {
			dup = dup || within(real, s)
		}
		if !dup {
			seen = append(seen, real)
			gs = append(gs, grant{grantRX, real})
		}
	}
	gs = append(gs, grant{grantLs, "/etc"})
	for _, p := range readableParts(os.DirFS("/etc"), ".") {
		gs = append(gs, grant{grantR, filepath.Join("/etc", p)})
	}
	gs = append(gs, grant{grantR, "/proc"})
	for _, d := range devices {
		gs = append(gs, grant{grantDev, d})
	}
	return gs
}
