package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// wrapper runs every command; see the package comment. $0 is the call's
// nonce, $1 the script, $2 the working directory; stdinVar, when set, is
// the script's standard input. The exec's own stdin is the control pipe,
// read by the watcher only. The wrapper changes to the working directory
// itself, inside the container, so that the runtime never follows a path
// the container controls; when it cannot, no header is printed and Exec
// reports ErrStart.
const wrapper = `cd "$2" 2>/dev/null || { printf 'cannot change to directory %s in the container\n' "$2" >&2; exit 125; }
unset OLDPWD
printf '%s %d\n' "$0" "$$" >&2
exec 3<&0 </dev/null
(trap '' TERM INT HUP; while read -r s; do kill -s "$s" 0; done; kill -s KILL 0) <&3 >/dev/null 2>&1 &
exec 3<&-
trap : TERM
if [ -n "${` + stdinVar + `+x}" ]; then
	in=$` + stdinVar + `
	unset ` + stdinVar + `
	printf '%s' "$in" | /bin/sh -c "$1"
else
	/bin/sh -c "$1"
fi
s=$?
printf '\n%s %d\n' "$0" "$s" >&2
kill -s KILL 0
`

// stdinVar carries Cmd.Stdin from the client's environment to the wrapper,
// which unsets it before the script runs.
const stdinVar = "REIN_SANDBOX_STDIN"

// Exec runs c.Script with /bin/sh in the container. See sandbox.Executor
// for the contract and the package comment for how a command is stopped.
//
// What differs from sandbox.Local: the exit status is the one the
// container's shell reports, so a script killed by a signal of its own
// making reads as exit 128+n; Result.Signal is set only when Exec itself
// stopped the command (timeout, abort) or the wrapper was killed.
//
// A container that is gone (killed, removed, its daemon restarted) is
// started again once, and a command that never began in the dead one runs
// in the new one; when that fails too, or the new container dies as well,
// Exec returns sandbox.ErrExecutorDead from then on.
func (e *Executor) Exec(ctx context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	res, err := e.execStaged(ctx, c)
	if !errors.Is(err, errNotRun) || ctx.Err() != nil {
		return res, err
	}
	id := e.containerID()
	if e.running(ctx, id) {
		return res, err // the container is fine; the command could not start in it
	}
	// No staged command may run while the container and the namespaces
	// rein serves in it are replaced.
	e.stageMu.Lock()
	rerr := e.restart(ctx, id)
	e.stageMu.Unlock()
	if rerr != nil {
		return res, rerr
	}
	return e.execStaged(ctx, c)
}

// errNotRun marks an Exec whose wrapper never ran in the container: nothing
// of the command happened, so it may be run again.
var errNotRun = errors.New("the command did not start in the container")

func (e *Executor) execOnce(ctx context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	if err := e.deadErr(); err != nil {
		return sandbox.Result{}, err
	}
	c, err := e.prepare(c)
	if err != nil {
		return sandbox.Result{}, err
	}
	if ctx.Err() != nil {
		return sandbox.Result{}, aborted(ctx)
	}
	if e.isClosed() {
		return sandbox.Result{}, fmt.Errorf("%w: the sandbox container was removed", sandbox.ErrStart)
	}
	nonce := randomHex(16)
	id := e.containerID()
	oom := e.oomCounter()
	kills := oomKills(oom)
	args, env := e.execArgs(nonce, c, id)

	p := &call{
		e:      e,
		id:     id,
		cmd:    exec.Command(e.runtime, args...),
		stdout: sandbox.NewCapWriter(e.maxOutput),
		stderr: sandbox.NewCapWriter(e.maxOutput),
		pidc:   make(chan int, 1),
		done:   make(chan struct{}),
	}
	p.frame = newFrame(nonce, p.stderr, p.pidc)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.frame
	p.cmd.WaitDelay = killWait
	if p.ctl, err = p.cmd.StdinPipe(); err != nil {
		return sandbox.Result{}, fmt.Errorf("%w: %w", sandbox.ErrStart, err)
	}
	if err := p.cmd.Start(); err != nil {
		return sandbox.Result{}, fmt.Errorf("%w: %s exec: %w", sandbox.ErrStart, e.name, err)
	}
	p.start = time.Now()
	go func() {
		defer close(p.done)
		_ = p.cmd.Wait() // the exit status is in ProcessState
		p.end = time.Now()
	}()
	res, err := p.supervise(ctx, c.Timeout, e.graceOrDefault())
	// The kernel's OOM killer sends SIGKILL; a kill counted in the
	// container's memory cgroup while this command ran, with this command
	// ending by SIGKILL, is reported as such. (Two commands running at once
	// in one container cannot be told apart: both are reported.)
	// The script's shell reports a child so killed as status 137.
	killed := res.Signal == syscall.SIGKILL.String() || (res.Signal == "" && res.ExitCode == 128+int(syscall.SIGKILL))
	if kills >= 0 && killed && oomKills(oom) > kills {
		res.ExitCode, res.Signal = -1, syscall.SIGKILL.String()
		res.OOMKilled, res.MemoryLimit = true, max(e.memLimit, 0)
	}
	return res, err
}

// execArgs returns the client's arguments and environment to run c, as
// prepared, under the wrapper.
func (e *Executor) execArgs(nonce string, c sandbox.Cmd, id string) (args, env []string) {
	args = make([]string, 0, 12+len(c.Env))
	args = append(args, "exec", "--interactive", "--user="+e.user, "--workdir=/")
	for _, kv := range c.Env {
		args = append(args, "--env="+kv)
	}
	env = e.clientEnv
	if c.Stdin != "" {
		args = append(args, "--env="+stdinVar) // the value comes from the client's environment
		env = append(slices.Clip(env), stdinVar+"="+c.Stdin)
	}
	return append(args, id, "/bin/sh", "-c", wrapper, nonce, c.Script, c.Dir), env
}

// prepare checks c and fills its defaults.
func (e *Executor) prepare(c sandbox.Cmd) (sandbox.Cmd, error) {
	switch {
	case !filepath.IsAbs(c.Dir):
		return c, fmt.Errorf("%w: working directory %q is not absolute", sandbox.ErrInvalid, c.Dir)
	case !within(filepath.Clean(c.Dir), e.workDir):
		return c, fmt.Errorf("%w: working directory %q is outside the work dir %q, the only directory of the host in the container", sandbox.ErrInvalid, c.Dir, e.workDir)
	case c.Timeout < 0:
		return c, fmt.Errorf("%w: negative timeout %v", sandbox.ErrInvalid, c.Timeout)
	case len(c.Stdin) > MaxStdin:
		return c, fmt.Errorf("%w: standard input of %d bytes; the %s backend passes at most %d", sandbox.ErrInvalid, len(c.Stdin), e.name, MaxStdin)
	case strings.IndexByte(c.Stdin, 0) >= 0:
		return c, fmt.Errorf("%w: standard input holds a NUL byte, which the %s backend cannot pass", sandbox.ErrInvalid, e.name)
	}
	c.Dir = filepath.Clean(c.Dir)
	if c.Timeout == 0 {
		c.Timeout = sandbox.DefaultTimeout
	}
	if c.Env == nil {
		c.Env = e.env
	}
	if e.opts.Egress != nil {
		c.Env = sandbox.ProxyEnv(c.Env, sandbox.ProxyAddr())
	}
	return c, checkEnv(c.Env)
}

func (e *Executor) graceOrDefault() time.Duration {
	if e.grace == 0 {
		return sandbox.DefaultGrace
	}
	return max(e.grace, 0)
}

// call is one running docker exec.
type call struct {
	e              *Executor
	id             string // the container
	cmd            *exec.Cmd
	ctl            io.WriteCloser // the watcher's control pipe
	stdout, stderr *sandbox.CapWriter
	frame          *frame
	pidc           chan int
	pid            int // the wrapper's pid in the container, once known
	start, end     time.Time
	done           chan struct{} // closed once the client has been waited for
}

// supervise waits for the call to end, stopping it at the timeout or when
// ctx ends, and builds the result.
func (p *call) supervise(ctx context.Context, timeout, grace time.Duration) (sandbox.Result, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var timedOut, abort, signaled bool
	select {
	case <-p.done:
	case <-ctx.Done():
		abort = true
	case <-timer.C:
		timedOut = true
		if grace > 0 {
			p.send("TERM")
			signaled = true
			g := time.NewTimer(grace)
			select {
			case <-p.done:
			case <-ctx.Done():
				abort = true
			case <-g.C:
			}
			g.Stop()
		}
	}
	if !p.finished() {
		signaled = true
		p.kill(ctx)
	}
	<-p.done
	_ = p.frame.Close()
	return p.result(ctx, timedOut, abort, signaled)
}

func (p *call) finished() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// send asks the watcher to signal the wrapper's group.
func (p *call) send(sig string) {
	_, _ = io.WriteString(p.ctl, sig+"\n") // fails only once the client is gone
}

// kill stops the call: SIGKILL to the group through the watcher, then, if
// the script has killed the watcher, through a second exec, and last the
// client itself.
func (p *call) kill(ctx context.Context) {
	p.send("KILL")
	_ = p.ctl.Close()
	if p.wait(killWait) {
		return
	}
	if pid := p.wrapperPID(); pid > 0 {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
		_, _ = p.e.run(kctx, "exec", "--user="+p.e.user, p.id, "/bin/sh", "-c", `kill -s KILL -"$1"`, "rein-kill", strconv.Itoa(pid))
		cancel()
		if p.wait(killWait) {
			return
		}
	}
	_ = p.cmd.Process.Kill() // the client; what runs in the container goes with Close
}

// wait waits up to d for the client to end.
func (p *call) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// wrapperPID returns the wrapper's pid if it has reported it.
func (p *call) wrapperPID() int {
	if p.pid == 0 {
		select {
		case p.pid = <-p.pidc:
		default:
		}
	}
	return p.pid
}

// result builds the result once the client has ended.
func (p *call) result(ctx context.Context, timedOut, abort, signaled bool) (sandbox.Result, error) {
	res := sandbox.Result{
		Stdout:      p.stdout.String(),
		Stderr:      p.stderr.String(),
		StdoutBytes: p.stdout.Len(),
		StderrBytes: p.stderr.Len(),
		TimedOut:    timedOut,
		Duration:    p.end.Sub(p.start),
	}
	code := -1
	if p.cmd.ProcessState != nil {
		code = p.cmd.ProcessState.ExitCode()
	}
	switch {
	case p.frame.hasStatus:
		res.ExitCode = p.frame.status
		if signaled {
			setSignal(&res, p.frame.status)
		}
	case p.wrapperPID() == 0 && !abort && !timedOut:
		// The wrapper never ran: the client failed (no such directory, the
		// container is gone, the daemon is down).
		// The client prints some of its errors on stdout.
		msg := strings.TrimSpace(strings.TrimSpace(res.Stderr) + " " + strings.TrimSpace(res.Stdout))
		return res, fmt.Errorf("%w: %w: %s exec: exit %d: %s", sandbox.ErrStart, errNotRun, p.e.name, code, msg)
	default:
		// The wrapper was killed (by Exec, the kernel, or the script).
		res.ExitCode = code
		setSignal(&res, code)
	}
	if abort {
		return res, aborted(ctx)
	}
	return res, nil
}

// setSignal turns a shell's status 128+n into the signal n.
func setSignal(res *sandbox.Result, status int) {
	if status > 128 && status < 128+65 {
		res.ExitCode = -1
		res.Signal = syscall.Signal(status - 128).String()
	}
}

// aborted returns the error for a command stopped because ctx ended.
func aborted(ctx context.Context) error {
	return fmt.Errorf("%w: %w", sandbox.ErrAborted, context.Cause(ctx))
}
