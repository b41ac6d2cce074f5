//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// zygote is rein's side of a landlock executor's zygote (see zygoteMain):
// the process, the control socket, and the commands in flight.
type zygote struct {
	pid  int
	conn *net.UnixConn
	// home is the executor's cgroup: the zygote and every command it
	// starts live in it, so no process ever moves between cgroups (a move
	// waits for an RCU grace period: milliseconds when commands are spaced
	// as in a session). The pids and memory limits hold per executor; what
	// a command leaves behind is killed when no command is running
	// (sweepLeftovers). nil without cgroups.
	home *pidsCgroup
	// running counts the commands started and not yet ended; guarded by
	// forkMu, so a sweep never races a fork.
	running int

	wmu  sync.Mutex // serialises writes to conn
	next atomic.Uint64

	ready     chan struct{} // closed at the zygote's ready frame
	readyOnce sync.Once
	dead      chan struct{} // closed when the zygote is gone or unusable
	deadOnce  sync.Once
	why       error // why it is dead; set before dead is closed

	// forkMu is held while the zygote forks a command, while leftovers are
	// swept from its cgroup, and while the zygote is reaped: so the
	// zygote's pid always names the zygote while it is held, and a sweep
	// never kills a command being started.
	forkMu sync.Mutex
	exited chan struct{} // closed once the zygote is reaped

	stderr  *CapWriter    // what the zygote wrote on stderr; read after errDone
	errDone chan struct{} // closed when its stderr is at EOF

	// stage is rein's end of the stager's socket (see stagerMain), nil
	// when the executor does not stage; closed with the zygote.
	stage *stagerConn
}

// zreply is what the zygote answered about a command.
type zreply struct {
	pid    int
	status uint32 // wait status
	err    string // failed: why
}

// errZygoteClosed is why a zygote its executor closed is dead.
var errZygoteClosed = errors.New("the executor closed it")

// zygoteUnresponsive is how long rein waits for the zygote to report a
// command it was told to kill as ended before it gives up on the zygote.
const zygoteUnresponsive = 2 * time.Second

// errNotSent marks a command that never reached the zygote, because the
// zygote was gone: it did not run, and may be tried on a new zygote.
var errNotSent = errors.New("the zygote is gone")

// startZygote starts a zygote for st: rein's helper, confined as for a
// command, execs the rein binary as the zygote, which reports ready on the
// control socket. Descriptors of the helper: 3 the status pipe, 4 the
// zygote's ruleset, 5 the control socket and 6 the commands' ruleset (both
// kept for the zygote), 7 the network namespace (as root).
func (st *landlockState) startZygote(ctx context.Context, l *Landlock) (*zygote, error) {
	z := &zygote{
		ready:   make(chan struct{}),
		dead:    make(chan struct{}),
		exited:  make(chan struct{}),
		stderr:  NewCapWriter(4 << 10),
		errDone: make(chan struct{}),
	}
	var theirs, statusR, statusW, errR, errW *os.File
	closeAll := func() {
		for _, f := range []*os.File{theirs, statusR, statusW, errR, errW} {
			if f != nil {
				f.Close()
			}
		}
	}
	defer closeAll()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: zygote control socket: %w", ErrStart, err)
	}
	ours := os.NewFile(uintptr(fds[0]), "zygote-control")
	theirs = os.NewFile(uintptr(fds[1]), "zygote-control")
	c, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: zygote control socket: %w", ErrStart, err)
	}
	z.conn = c.(*net.UnixConn)
	if statusR, statusW, err = os.Pipe(); err == nil {
		errR, errW, err = os.Pipe()
	}
	if err != nil {
		z.conn.Close()
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	if st.cgroups != "" {
		// Its own memory cgroup too (the same limit): on cgroup v1 the
		// memory hierarchy is another tree, and join must move the zygote
		// out of the command's in both.
		// One more process than a command may have: the zygote itself.
		if z.home, err = newCgroup(st, l, l.maxProcs()+1); err != nil {
			z.conn.Close()
			return nil, fmt.Errorf("%w: %w", ErrStart, err)
		}
	}
	cfg := helperConfig{
		statusFD:  3,
		rulesetFD: 4,
		keepFDs:   []int{5, 6},
		net:       st.net,
		netns:     st.netns,
		nproc:     int64(l.maxProcs()),
		fsize:     l.maxFileSize(),
		argv:      []string{st.helper, HelperArg, zygoteArg, "-control-fd", "5", "-ruleset-fd", "6", "-netns", st.netns},
		maskFiles: st.masks.files,
		maskDirs:  st.masks.dirs,
		ro:        st.masks.ro,
		maskSrc:   st.maskSrc,
	}
	files := []*os.File{statusW, st.zygoteRuleset, theirs, st.ruleset}
	if st.netnsF != nil {
		cfg.netnsFD = 7
		files = append(files, st.netnsF)
	}
	if st.stageRoot != "" {
		sc, stagerEnd, err := newStagerConn()
		if err != nil {
			z.conn.Close()
			return nil, fmt.Errorf("%w: %w", ErrStart, err)
		}
		defer stagerEnd.Close()
		z.stage = sc
		cfg.stageFD, cfg.stageWork, cfg.stageRoot = 3+len(files), st.workDir, st.stageRoot
		files = append(files, stagerEnd)
		cfg.argv = append(cfg.argv, "-stage-work", st.workDir)
	}
	if z.home != nil {
		cfg.cgroup = z.home.dir
		if z.home.mem != z.home.dir {
			cfg.memcg = z.home.mem
		}
	}
	attr := st.attr
	// rein's death (of whatever signal) gives the zygote SIGTERM, on which
	// it kills everything its commands started, then exits.
	attr.Pdeathsig = syscall.SIGTERM
	if st.stageRoot != "" && attr.Cloneflags&syscall.CLONE_NEWUSER != 0 {
		// As a user, the helper runs with rein's uid in its new user
		// namespace, and an exec as a uid other than 0 empties the
		// permitted set: without this the helper would hold no capability
		// to hand the stager, which then could not mount. Ambient, these
		// survive the exec: CAP_SYS_ADMIN and CAP_DAC_OVERRIDE for the
		// stager (see stagerCaps), CAP_SETPCAP so that the helper can
		// still empty its bounding set. The helper starts the stager with
		// stagerCaps alone and then drops every capability, the ambient
		// set too (dropCapabilities), before anything of a command runs.
		// All of them hold in the helper's user namespace only, where
		// rein's uid is the one uid mapped.
		attr.AmbientCaps = append(stagerCaps(), unix.CAP_SETPCAP)
	}
	cmd := &exec.Cmd{
		Path:        st.helper,
		Args:        append([]string{st.helper, HelperArg}, helperArgs(cfg)...),
		Dir:         st.workDir,
		Env:         []string{},
		Stderr:      errW,
		ExtraFiles:  files,
		SysProcAttr: &attr,
	}
	started := make(chan error, 1)
	go z.own(cmd, started)
	if err := <-started; err != nil {
		z.conn.Close()
		if z.stage != nil {
			z.stage.close()
		}
		if z.home != nil {
			z.home.remove()
		}
		return nil, fmt.Errorf("%w: starting the sandbox helper %s: %w", ErrStart, st.helper, err)
	}
	theirs.Close()
	statusW.Close()
	errW.Close()
	theirs, statusW, errW = nil, nil, nil
	go func(r *os.File) {
		defer close(z.errDone)
		_, _ = io.Copy(z.stderr, r)
		r.Close()
	}(errR)
	errR = nil
	go z.read()

	status := make(chan []byte, 1)
	go func(r *os.File) {
		b, _ := io.ReadAll(io.LimitReader(r, statusMax)) // EOF at the helper's exec or end
		r.Close()
		status <- b
	}(statusR)
	statusR = nil
	var err2 error
	select {
	case b := <-status:
		if len(b) != 1 || b[0] != statusReady {
			err2 = z.startErr(b, st.helper)
			break
		}
		select {
		case <-z.ready:
			return z, nil
		case <-z.dead:
			err2 = z.startErr(b, st.helper)
		case <-ctx.Done():
			err2 = aborted(ctx)
		}
	case <-ctx.Done():
		err2 = aborted(ctx)
	}
	z.stop()
	return nil, err2
}

// own starts the zygote and reaps it, on a thread of its own that lives as
// long as the zygote: the zygote's parent-death signal follows the thread
// that started it.
func (z *zygote) own(cmd *exec.Cmd, started chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
	if err := cmd.Start(); err != nil {
		started <- err
		return
	}
	z.pid = cmd.Process.Pid
	started <- nil
	waitExited(z.pid)
	z.fail(errors.New("the zygote exited"))
	z.forkMu.Lock()
	_ = cmd.Wait()
	close(z.exited)
	z.forkMu.Unlock()
}

// startErr explains why a zygote did not become ready, from its status
// bytes and stderr; it waits for the zygote to be gone.
func (z *zygote) startErr(status []byte, helper string) error {
	z.kill()
	<-z.exited
	<-z.errDone
	switch {
	case len(status) > 0 && status[0] == statusFailed:
		return fmt.Errorf("%w: sandbox: %s", ErrStart, status[1:])
	case len(status) > 1 && status[0] == statusReady && status[1] == statusFailed:
		return fmt.Errorf("%w: sandbox: %s", ErrStart, status[2:])
	case len(status) == 1 && status[0] == statusReady:
		return fmt.Errorf("%w: the sandbox zygote did not start: %s", ErrStart, firstLine(z.stderr.String()))
	}
	return fmt.Errorf("%w: %s did not act as the sandbox helper (does its main call sandbox.HelperMain when sandbox.IsHelper()?): %.200s",
		ErrStart, helper, firstLine(z.stderr.String()))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// fail marks the zygote dead for why, once, and closes the socket.
func (z *zygote) fail(why error) {
	z.deadOnce.Do(func() {
		z.why = why
		close(z.dead)
		z.conn.Close()
		if z.stage != nil {
			z.stage.close()
		}
	})
}

// deadErr says why the zygote is dead; call it once dead is closed.
func (z *zygote) deadErr() error {
	<-z.dead
	msg := z.why.Error()
	select {
	case <-z.errDone:
		if s := firstLine(z.stderr.String()); s != "" {
			msg += ": " + s
		}
	default:
	}
	return errors.New(msg)
}

// alive reports whether the zygote can take commands.
func (z *zygote) alive() bool {
	select {
	case <-z.dead:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL to the zygote unless it is already reaped.
func (z *zygote) kill() {
	z.forkMu.Lock()
	defer z.forkMu.Unlock()
	select {
	case <-z.exited:
	default:
		_ = syscall.Kill(z.pid, syscall.SIGKILL)
	}
}

// stop ends the zygote and waits until it is reaped and its cgroup gone.
func (z *zygote) stop() {
	z.fail(errZygoteClosed)
	z.kill()
	<-z.exited
	<-z.errDone
	if z.home != nil {
		z.home.remove()
	}
}

// read dispatches the zygote's frames until the socket closes.
func (z *zygote) read() {
	var fb frameBuf
	buf := make([]byte, 4<<10)
	for {
		n, err := z.conn.Read(buf)
		fb.buf = append(fb.buf, buf[:n]...)
		for {
			f, ok, ferr := fb.next()
			if ferr == nil && ok {
				ferr = z.dispatch(f)
			}
			if ferr != nil {
				z.fail(ferr)
				z.kill()
				return
			}
			if !ok {
				break
			}
		}
		if err != nil {
			z.fail(fmt.Errorf("the zygote's socket closed: %w", err))
			return
		}
	}
}

// dispatch handles a frame from the zygote on the socket: only ready.
func (z *zygote) dispatch(f frame) error {
	if f.typ != frameReady || f.id != 0 {
		return fmt.Errorf("zygote protocol: unexpected frame %q on the socket", f.typ)
	}
	z.readyOnce.Do(func() { close(z.ready) })
	return nil
}

// ended notes that a command started by z has ended, and when no other is
// running, kills what the commands left in the executor's cgroup:
// processes that left the command's process group or session (a daemon, a
// double fork). While another command runs they are left until it ends
// too: a sweep cannot tell whose they are.
func (z *zygote) ended() {
	z.forkMu.Lock()
	defer z.forkMu.Unlock()
	if z.running > 0 {
		z.running--
	}
	if z.running == 0 {
		z.sweepLocked()
	}
}

// sweepIfAlone kills the leftovers in the executor's cgroup when the
// command being killed is the only one running.
func (z *zygote) sweepIfAlone() {
	z.forkMu.Lock()
	defer z.forkMu.Unlock()
	if z.running <= 1 {
		z.sweepLocked()
	}
}

// sweepLocked kills everything in the executor's cgroup but the zygote
// (everything, once the zygote is gone); forkMu held.
func (z *zygote) sweepLocked() {
	if z.home == nil {
		return
	}
	select {
	case <-z.exited:
		z.home.killAll()
	default:
		z.home.killAllBut(z.pid)
	}
}

// stopped reports whether the zygote is stopped (SIGSTOP, a tracer), as
// /proc shows it.
func (z *zygote) stopped() bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", z.pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "T") || strings.HasPrefix(rest, "t")
}
