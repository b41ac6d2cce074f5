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

// readAnswer reads the zygote's next answer about command id from its
// status pipe: started, failed or done. io.EOF (or io.ErrUnexpectedEOF)
// means the zygote closed the pipe without answering: it died.
func readAnswer(r *os.File, fb *frameBuf, id uint64) (frameType, zreply, error) {
	buf := make([]byte, 512)
	for {
		f, ok, err := fb.next()
		if err != nil {
			return 0, zreply{}, err
		}
		if ok {
			var rep zreply
			if f.id != id {
				return 0, rep, fmt.Errorf("zygote protocol: answer for command %d on the pipe of %d", f.id, id)
			}
			switch f.typ {
			case frameStarted:
				pid, err := bodyUint32(f.body)
				rep.pid = int(pid)
				return f.typ, rep, err
			case frameFailed:
				rep.err = string(f.body)
				return f.typ, rep, nil
			case frameDone:
				ws, err := bodyUint32(f.body)
				rep.status = ws
				return f.typ, rep, err
			}
			return 0, rep, fmt.Errorf("zygote protocol: unexpected answer %q", f.typ)
		}
		n, err := r.Read(buf)
		fb.buf = append(fb.buf, buf[:n]...)
		if err != nil && n == 0 {
			if errors.Is(err, io.EOF) && len(fb.buf) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, zreply{}, err
		}
	}
}

// write sends b, with descriptors in oob if any.
func (z *zygote) write(b, oob []byte) error {
	z.wmu.Lock()
	defer z.wmu.Unlock()
	n, _, err := z.conn.WriteMsgUnix(b, oob, nil)
	if err == nil && n < len(b) {
		_, err = z.conn.Write(b[n:])
	}
	return err
}

// signal asks the zygote to signal a command's process group.
func (z *zygote) signal(id uint64, sig syscall.Signal) {
	_ = z.write(appendFrame(nil, frameSignal, id, uint32Body(uint32(sig))), nil) // a dead zygote is handled by the caller
}

// start has the zygote start req with ends as its stdin, stdout and
// stderr, in the executor's cgroup, and returns the shell's pid. statusW is the
// status pipe's write end, which start closes; the answers come on statusR.
//
// A zygote that does not answer (stopped, stuck) holds up neither the
// command's timeout nor an abort: when ctx ends or the timeout passes
// first, the zygote is killed and start returns.
func (z *zygote) start(ctx context.Context, timeout time.Duration, id uint64, req runRequest, ends childEnds, statusR, statusW *os.File, fb *frameBuf) (int, error) {
	z.forkMu.Lock()
	defer z.forkMu.Unlock()
	defer statusW.Close()
	if z.alive() && z.stopped() {
		// Stopped from outside: it would not read the frame. Nothing was sent.
		z.fail(errors.New("the zygote was stopped (SIGSTOP or a tracer), so it was killed"))
		_ = syscall.Kill(z.pid, syscall.SIGKILL) // forkMu held: not reaped
	}
	if !z.alive() {
		return 0, fmt.Errorf("%w: sandbox: %w: %w", ErrStart, errNotSent, z.deadErr())
	}
	rights := unix.UnixRights(int(ends.stdin.Fd()), int(ends.stdout.Fd()), int(ends.stderr.Fd()), int(statusW.Fd()))
	err := z.write(appendFrame(nil, frameRun, id, req.encode()), rights)
	if err != nil && !z.alive() || errors.Is(err, syscall.EPIPE) {
		// Nothing of the frame reached a zygote that still reads.
		z.fail(fmt.Errorf("writing to the zygote: %w", err))
		return 0, fmt.Errorf("%w: sandbox: %w: %w", ErrStart, errNotSent, z.deadErr())
	}
	if err != nil { // a frame cut short: the stream is lost
		z.fail(fmt.Errorf("writing to the zygote: %w", err))
		_ = syscall.Kill(z.pid, syscall.SIGKILL) // forkMu held: not reaped
	}
	var typ frameType
	var r zreply
	if err == nil {
		statusW.Close() // the zygote has its own now, or will never: EOF if it dies
		var late atomic.Bool
		timer := time.AfterFunc(timeout, func() {
			late.Store(true)
			_ = statusR.SetReadDeadline(time.Now())
		})
		unwatch := context.AfterFunc(ctx, func() { _ = statusR.SetReadDeadline(time.Now()) })
		typ, r, err = readAnswer(statusR, fb, id)
		timer.Stop()
		unwatch()
		_ = statusR.SetReadDeadline(time.Time{})
		if errors.Is(err, os.ErrDeadlineExceeded) {
			z.fail(errors.New("the zygote did not answer: stopped or stuck"))
			_ = syscall.Kill(z.pid, syscall.SIGKILL) // forkMu held: not reaped; a command it began dies with it
			if z.home != nil {
				z.home.killAll() // the zygote and all it started
			}
			if !late.Load() && ctx.Err() != nil {
				return 0, fmt.Errorf("%w; the sandbox zygote had not started the command (it did not answer) and was killed", aborted(ctx))
			}
			return 0, fmt.Errorf("%w: sandbox: the zygote did not start the command within its timeout of %v (stopped or stuck); it was killed and the next command starts a new one", ErrStart, timeout)
		}
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			z.fail(err)
			_ = syscall.Kill(z.pid, syscall.SIGKILL) // forkMu held: not reaped
		}
		if err == nil && typ == frameDone {
			err = errors.New("zygote protocol: done before started")
		}
	}
	if err == nil && typ == frameStarted {
		z.running++
	}
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		// The frame was sent but the zygote ended before it said the command
		// started: killed or crashed while it read the frame, forked, or
		// was about to answer. A shell it forked died with it (parent-death
		// signal), and as root the caller's cgroup ends the rest; but the
		// command may have begun, so it is not sent again.
		z.fail(errors.New("the zygote closed a command's status pipe before it answered"))
		return 0, fmt.Errorf("%w: sandbox: the zygote died before it reported the command started (it was killed or crashed); if the command had begun, its shell died with it; the command was not retried; the next command starts a new zygote", ErrStart)
	case err != nil:
		return 0, fmt.Errorf("%w: sandbox: the zygote: %w", ErrStart, err)
	case typ == frameFailed:
		return 0, fmt.Errorf("%w: %s", ErrStart, r.err)
	}
	return r.pid, nil
}

// exec runs one command through the zygote and supervises it as run does
// for a process of rein's own: timeout (SIGTERM, grace, SIGKILL), abort
// (SIGKILL at once), the group killed when the shell exits, the cgroup
// killed at the end, output capped. A zygote that dies with the command in
// flight ends the command: Exec returns an error wrapping ErrStart.
func (z *zygote) exec(ctx context.Context, c Cmd, req runRequest, maxOutput int, grace time.Duration) (Result, error) {
	if ctx.Err() != nil {
		return Result{}, aborted(ctx)
	}
	var s streams
	ends, err := s.open(maxOutput, c.Stdin != "")
	if err == nil && ends.stdin == nil {
		ends.stdin, err = os.Open(os.DevNull)
	}
	if err != nil {
		ends.close()
		s.close()
		return Result{}, fmt.Errorf("%w: %w", ErrStart, err)
	}
	defer s.close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		ends.close()
		if s.inW != nil {
			s.inW.Close()
		}
		return Result{}, fmt.Errorf("%w: %w", ErrStart, err)
	}
	defer statusR.Close()
	id := z.next.Add(1)
	var fb frameBuf
	oom := z.home.oomKills()
	pid, err := z.start(ctx, c.Timeout, id, req, ends, statusR, statusW, &fb)
	ends.close() // the zygote has passed them on, or will never
	if err != nil {
		if s.inW != nil {
			s.inW.Close()
		}
		return Result{}, err
	}
	begin := time.Now()
	s.copy(c.Stdin)

	// This goroutine waits for the answer; the watcher enforces the
	// timeout and the abort by asking the zygote to signal the group.
	stop := make(chan struct{})
	watched := make(chan watchResult, 1)
	go z.watch(ctx, id, c.Timeout, grace, stop, watched)
	typ, r, err := readAnswer(statusR, &fb, id)
	close(stop)
	w := <-watched
	got := err == nil && typ == frameDone
	if err == nil && !got {
		err = fmt.Errorf("zygote protocol: answer %q after started", typ)
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		z.fail(err)
		z.kill()
	}
	if !got {
		// The zygote died: the shell with it, of its parent-death signal;
		// kill what is left of its group.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	z.ended()
	dur := time.Since(begin)
	s.drain()
	res := Result{
		Stdout:      s.stdout.String(),
		Stderr:      s.stderr.String(),
		StdoutBytes: s.stdout.Len(),
		StderrBytes: s.stderr.Len(),
		TimedOut:    w.timedOut,
		Duration:    dur,
	}
	if z.home != nil && z.home.oomKills() > oom {
		res.OOMKilled, res.MemoryLimit = true, z.home.memLimit
	}
	if !got {
		z.fail(errors.New("the zygote closed a command's status pipe"))
		if w.abort {
			return res, fmt.Errorf("%w; the sandbox zygote did not end the command and was killed, and the command with it", aborted(ctx))
		}
		if w.unresponsive {
			return res, fmt.Errorf("%w: sandbox: the zygote did not end the command when told to (stopped or stuck), so it was killed, and the command with it; the next command starts a new zygote", ErrStart)
		}
		return res, fmt.Errorf("%w: sandbox: the zygote died while the command ran, and the command was killed (%w); the next command starts a new zygote", ErrStart, z.deadErr())
	}
	ws := syscall.WaitStatus(r.status)
	res.ExitCode = ws.ExitStatus()
	if ws.Signaled() {
		res.ExitCode = -1
		res.Signal = ws.Signal().String()
	}
	if w.abort {
		return res, aborted(ctx)
	}
	return res, nil
}

// watchResult is how a command's watch ended.
type watchResult struct {
	timedOut, abort bool
	unresponsive    bool // the zygote did not end the command and was killed
}

// watch enforces a command's timeout (SIGTERM, grace, SIGKILL) and abort
// (SIGKILL at once) until stop is closed, and gives up on a zygote that
// does not end a command it was told to kill.
func (z *zygote) watch(ctx context.Context, id uint64, timeout, grace time.Duration, stop <-chan struct{}, out chan<- watchResult) {
	var w watchResult
	defer func() { out <- w }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-stop:
		return
	case <-ctx.Done():
		w.abort = true
	case <-timer.C:
		w.timedOut = true
		if grace > 0 {
			z.signal(id, syscall.SIGTERM)
			g := time.NewTimer(grace)
			select {
			case <-stop:
				g.Stop()
				return
			case <-ctx.Done():
				w.abort = true
			case <-g.C:
			}
			g.Stop()
		}
	}
	z.signal(id, syscall.SIGKILL)
	z.sweepIfAlone() // what left the group, at once, when no other command runs
	wait := zygoteUnresponsive
	if z.stopped() {
		wait = 0 // it cannot act on the frame
	}
	u := time.NewTimer(wait)
	defer u.Stop()
	select {
	case <-stop:
	case <-u.C:
		// Killing the zygote ends the command too (parent-death signal)
		// and closes its status pipe.
		w.unresponsive = true
		z.fail(errors.New("the zygote did not end a killed command"))
		z.kill()
	}
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
