//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// spawnSpec is what differs between the backends that run a process on
// this machine: the program, its environment and how the kernel starts it.
// Everything else (pipes, process group, timeout, kill, capture) is run's,
// shared by Local and Landlock.
type spawnSpec struct {
	// argv is the program and its arguments; argv[0] is its path. Local
	// runs the shell; Landlock runs its helper with the shell's argv after
	// a prefix.
	argv []string
	// env is the program's complete environment.
	env       []string
	maxOutput int
	grace     time.Duration
	// attr is the base of the SysProcAttr (namespaces, a new session); run
	// adds a process group (unless attr.Setsid) and Pdeathsig.
	attr syscall.SysProcAttr
	// status gives the child a pipe on fd 3; what it writes there is
	// returned by run (at most statusMax bytes).
	status bool
	// files are more descriptors for the child, after the status pipe;
	// they stay open in the parent.
	files []*os.File
	// afterKill, when set, runs right after the group got SIGKILL, to kill
	// what left the group (Landlock's cgroup).
	afterKill func()
	// beforeKill, when set, runs right before the group gets SIGKILL, with
	// the program's pid and a channel closed once it has exited: Local's
	// reaper is asked to kill what the command started, which a SIGKILL of
	// the reaper would leave running.
	beforeKill func(pid int, exited <-chan struct{})
	// pdeathsig is the program's parent-death signal; 0 means SIGKILL.
	pdeathsig syscall.Signal
}

// statusMax bounds what run keeps of the status pipe.
const statusMax = 4 << 10

// run starts s for c (already prepared) and supervises it to the end. See
// Local and Executor for what it guarantees.
//
// How a run ends: the program exits, or the timeout passes (SIGTERM to the
// group, then SIGKILL after the grace or as soon as the program has exited),
// or ctx ends (SIGKILL to the group at once). In every case the group gets
// SIGKILL while the program, dead but not yet reaped, still holds the
// group's id, so the signal cannot reach a stranger that reused it.
func run(ctx context.Context, c Cmd, s *spawnSpec) (Result, []byte, error) {
	if ctx.Err() != nil {
		return Result{}, nil, aborted(ctx)
	}
	// Pdeathsig fires when the thread that forked the child ends, not the
	// process; keep this goroutine on its thread until the child is reaped
	// so no other goroutine can end that thread under it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	p, err := start(c, s)
	if err != nil {
		return Result{}, nil, err
	}
	defer p.close()
	res, err := p.supervise(ctx, c.Timeout, s)
	return res, p.statusBytes(), err
}

// proc is one started command.
type proc struct {
	streams
	cmd     *exec.Cmd
	pgid    int
	start   time.Time
	statusR *os.File // nil without a status pipe
	status  []byte
	exited  chan struct{} // closed when the program has exited (not yet reaped)
}

// streams are a command's standard descriptors as rein holds them (the
// read ends of stdout and stderr, the write end of stdin) and the
// goroutines that copy them.
type streams struct {
	outR, errR     *os.File
	inW            *os.File // nil when there is no stdin
	stdout, stderr *CapWriter
	io             sync.WaitGroup // the goroutines copying output, input (and status)
}

// childEnds are the other ends, for the command: stdin is nil when there
// is none.
type childEnds struct {
	stdin, stdout, stderr *os.File
}

func (e childEnds) close() {
	for _, f := range []*os.File{e.stdin, e.stdout, e.stderr} {
		if f != nil {
			f.Close()
		}
	}
}

// open makes the pipes for a command's output, and its input when
// withStdin. On error nothing is left open.
func (s *streams) open(maxOutput int, withStdin bool) (childEnds, error) {
	s.stdout, s.stderr = NewCapWriter(maxOutput), NewCapWriter(maxOutput)
	var e childEnds
	var err error
	if s.outR, e.stdout, err = os.Pipe(); err == nil {
		s.errR, e.stderr, err = os.Pipe()
	}
	if err == nil && withStdin {
		e.stdin, s.inW, err = os.Pipe()
	}
	if err != nil {
		e.close()
		s.close()
		if s.inW != nil {
			s.inW.Close()
		}
		return childEnds{}, err
	}
	return e, nil
}

// copy starts the goroutines that collect the output and feed stdin.
func (s *streams) copy(stdin string) {
	s.io.Add(2)
	go s.copyOut(s.stdout, s.outR)
	go s.copyOut(s.stderr, s.errR)
	if s.inW != nil {
		s.io.Add(1)
		go func() {
			defer s.io.Done()
			_, _ = io.WriteString(s.inW, stdin) // EPIPE when the command does not read it all
			_ = s.inW.Close()
		}()
	}
}

func start(c Cmd, s *spawnSpec) (*proc, error) {
	p := &proc{exited: make(chan struct{})}
	ends, err := p.open(s.maxOutput, c.Stdin != "")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	var statusW *os.File
	if s.status {
		if p.statusR, statusW, err = os.Pipe(); err != nil {
			ends.close()
			p.close()
			if p.inW != nil {
				p.inW.Close()
			}
			return nil, fmt.Errorf("%w: %w", ErrStart, err)
		}
	}
	attr := s.attr
	attr.Setpgid = !attr.Setsid // setsid makes the new group too; setpgid would then fail
	attr.Pdeathsig = syscall.SIGKILL
	if s.pdeathsig != 0 {
		attr.Pdeathsig = s.pdeathsig
	}
	p.cmd = &exec.Cmd{
		Path:        s.argv[0],
		Args:        s.argv,
		Dir:         c.Dir,
		Env:         s.env,
		Stdout:      ends.stdout,
		Stderr:      ends.stderr,
		SysProcAttr: &attr,
	}
	if ends.stdin != nil {
		p.cmd.Stdin = ends.stdin
	}
	if statusW != nil {
		p.cmd.ExtraFiles = []*os.File{statusW}
	}
	p.cmd.ExtraFiles = append(p.cmd.ExtraFiles, s.files...)
	err = p.cmd.Start()
	p.start = time.Now()
	// The child has its copies; ours would keep the pipes open forever.
	ends.close()
	if statusW != nil {
		statusW.Close()
	}
	if err != nil {
		p.close()
		if p.inW != nil {
			p.inW.Close()
		}
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	p.pgid = p.cmd.Process.Pid

	p.copy(c.Stdin)
	if p.statusR != nil {
		p.io.Add(1)
		go func() {
			defer p.io.Done()
			p.status, _ = io.ReadAll(io.LimitReader(p.statusR, statusMax))
		}()
	}
	go func() {
		defer close(p.exited)
		waitExited(p.pgid)
	}()
	return p, nil
}

func (s *streams) copyOut(w *CapWriter, r *os.File) {
	defer s.io.Done()
	_, _ = io.Copy(w, r) // ends at EOF, or at the read deadline set by drain
}

// statusBytes returns what the child wrote on its status pipe; it is
// complete once drain has returned.
func (p *proc) statusBytes() []byte { return p.status }

// waitExited blocks until process pid, a child, has exited, without
// reaping it. It waits in the runtime's poller on a pidfd, so no thread
// sits in a blocking system call meanwhile: one that does keeps the Go
// runtime's monitor thread waking every 20 µs to take its processor back,
// in rein and in the zygote alike, for every command. Where pidfds cannot
// be polled (Linux before 5.10) it blocks in waitid.
func waitExited(pid int) {
	if pollExited(pid) {
		return
	}
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// pollExited waits for child pid to exit through a pidfd in the runtime's
// poller; false: it could not, and the caller waits otherwise.
func pollExited(pid int) bool {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "pidfd") // non-blocking: in the poller, where it can be
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	exited := false
	err = rc.Read(func(fd uintptr) bool {
		// The poller is edge-triggered: a check that fails after the
		// exit's edge would wait for another that never comes, so an
		// interrupted one is repeated here.
		var info unix.Siginfo
		var err error = unix.EINTR
		for errors.Is(err, unix.EINTR) {
			err = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
		}
		if err != nil {
			return true // not waitable this way: the caller's waitid says why
		}
		exited = info.Signo != 0 // WNOHANG leaves it zero while pid runs
		return exited
	})
	return err == nil && exited
}

// supervise waits for the command to end, kills its group, reaps the
// program and collects the output.
func (p *proc) supervise(ctx context.Context, timeout time.Duration, s *spawnSpec) (Result, error) {
	grace := s.grace
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var timedOut, abort bool
	select {
	case <-p.exited:
	case <-ctx.Done():
		abort = true
	case <-timer.C:
		timedOut = true
		if grace > 0 {
			p.signal(syscall.SIGTERM)
			g := time.NewTimer(grace)
			select {
			case <-p.exited:
			case <-ctx.Done():
				abort = true
			case <-g.C:
			}
			g.Stop()
		}
	}
	if s.beforeKill != nil {
		s.beforeKill(p.pgid, p.exited)
	}
	p.signal(syscall.SIGKILL)
	if s.afterKill != nil {
		s.afterKill()
	}
	<-p.exited
	waitErr := p.cmd.Wait() // reaps the program; its output is on our pipes
	dur := time.Since(p.start)
	p.drain()

	res := Result{
		Stdout:      p.stdout.String(),
		Stderr:      p.stderr.String(),
		StdoutBytes: p.stdout.Len(),
		StderrBytes: p.stderr.Len(),
		TimedOut:    timedOut,
		Duration:    dur,
	}
	st := p.cmd.ProcessState
	if st == nil {
		return res, fmt.Errorf("%w: waiting for the shell: %w", ErrStart, waitErr)
	}
	res.ExitCode = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = -1
		res.Signal = ws.Signal().String()
	}
	if abort {
		return res, aborted(ctx)
	}
	return res, nil
}

// signal sends sig to the command's whole process group.
func (p *proc) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.pgid, sig) // ESRCH: the group is already gone
}

// drain waits for the output copiers once every process of the group is
// dead. Only a process that left the group can hold the pipes open now; after
// drainDelay its output is no longer read.
func (p *proc) drain() { p.streams.drain(p.statusR) }

// drain is proc.drain; more are further pipes read by goroutines in s.io.
func (s *streams) drain(more ...*os.File) {
	if s.inW != nil {
		_ = s.inW.SetWriteDeadline(time.Now()) // nobody of ours reads stdin any more
	}
	done := make(chan struct{})
	go func() {
		s.io.Wait()
		close(done)
	}()
	t := time.NewTimer(drainDelay)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	now := time.Now()
	for _, f := range append([]*os.File{s.outR, s.errR}, more...) {
		if f != nil {
			_ = f.SetReadDeadline(now)
		}
	}
	<-done
}

func (p *proc) close() {
	p.streams.close()
	if p.statusR != nil {
		p.statusR.Close()
	}
}

// close closes the output pipes; inW is closed by its writer.
func (s *streams) close() {
	for _, f := range []*os.File{s.outR, s.errR} {
		if f != nil {
			f.Close()
		}
	}
}
