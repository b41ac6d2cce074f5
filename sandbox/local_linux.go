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

// Exec runs c.Script with the shell. See Local and Executor for what it
// guarantees.
//
// How a run ends: the shell exits, or the timeout passes (SIGTERM to the
// group, then SIGKILL after the grace or as soon as the shell has exited), or
// ctx ends (SIGKILL to the group at once). In every case the group gets
// SIGKILL while the shell, dead but not yet reaped, still holds the group's
// id, so the signal cannot reach a stranger that reused it.
func (l *Local) Exec(ctx context.Context, c Cmd) (Result, error) {
	c, err := prepare(c)
	if err != nil {
		return Result{}, err
	}
	if ctx.Err() != nil {
		return Result{}, aborted(ctx)
	}
	// Pdeathsig fires when the thread that forked the child ends, not the
	// process; keep this goroutine on its thread until the child is reaped
	// so no other goroutine can end that thread under it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	p, err := l.start(c)
	if err != nil {
		return Result{}, err
	}
	defer p.close()
	return p.supervise(ctx, c.Timeout, l.grace())
}

// proc is one started command.
type proc struct {
	cmd            *exec.Cmd
	pgid           int
	start          time.Time
	outR, errR     *os.File
	inW            *os.File // nil when there is no stdin
	stdout, stderr *capWriter
	io             sync.WaitGroup // the goroutines copying output and input
	exited         chan struct{}  // closed when the shell has exited (not yet reaped)
}

func (l *Local) start(c Cmd) (*proc, error) {
	shell := l.shell()
	p := &proc{
		stdout: newCapWriter(l.MaxOutput),
		stderr: newCapWriter(l.MaxOutput),
		exited: make(chan struct{}),
	}
	var outW, errW, inR *os.File
	var err error
	closeAll := func() {
		for _, f := range []*os.File{p.outR, outW, p.errR, errW, inR, p.inW} {
			if f != nil {
				f.Close()
			}
		}
	}
	if p.outR, outW, err = os.Pipe(); err == nil {
		if p.errR, errW, err = os.Pipe(); err == nil && c.Stdin != "" {
			inR, p.inW, err = os.Pipe()
		}
	}
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	p.cmd = &exec.Cmd{
		Path:   shell,
		Args:   []string{shell, "-c", c.Script},
		Dir:    c.Dir,
		Env:    c.Env,
		Stdout: outW,
		Stderr: errW,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	if inR != nil {
		p.cmd.Stdin = inR
	}
	err = p.cmd.Start()
	p.start = time.Now()
	// The child has its copies; ours would keep the pipes open forever.
	for _, f := range []*os.File{outW, errW, inR} {
		if f != nil {
			f.Close()
		}
	}
	outW, errW, inR = nil, nil, nil
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	p.pgid = p.cmd.Process.Pid

	p.io.Add(2)
	go p.copyOut(p.stdout, p.outR)
	go p.copyOut(p.stderr, p.errR)
	if p.inW != nil {
		p.io.Add(1)
		go func() {
			defer p.io.Done()
			_, _ = io.WriteString(p.inW, c.Stdin) // EPIPE when the command does not read it all
			_ = p.inW.Close()
		}()
	}
	go func() {
		defer close(p.exited)
		waitExited(p.pgid)
	}()
	return p, nil
}

func (p *proc) copyOut(w *capWriter, r *os.File) {
	defer p.io.Done()
	_, _ = io.Copy(w, r) // ends at EOF, or at the read deadline set by drain
}

// waitExited blocks until process pid has exited, without reaping it.
func waitExited(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// supervise waits for the command to end, kills its group, reaps the shell
// and collects the output.
func (p *proc) supervise(ctx context.Context, timeout, grace time.Duration) (Result, error) {
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
	p.signal(syscall.SIGKILL)
	<-p.exited
	waitErr := p.cmd.Wait() // reaps the shell; its output is on our pipes
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
func (p *proc) drain() {
	if p.inW != nil {
		_ = p.inW.SetWriteDeadline(time.Now()) // nobody of ours reads stdin any more
	}
	done := make(chan struct{})
	go func() {
		p.io.Wait()
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
	_ = p.outR.SetReadDeadline(now)
	_ = p.errR.SetReadDeadline(now)
	<-done
}

func (p *proc) close() {
	p.outR.Close()
	p.errR.Close()
	// inW is closed by its writer.
}
