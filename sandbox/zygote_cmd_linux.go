//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

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
			case frameFailed, frameNoExec:
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
	case typ == frameNoExec:
		return 0, fmt.Errorf("%w: %w", ErrStart, execFailed(r.err))
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
