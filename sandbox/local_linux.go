//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Exec runs c.Script with the shell. See Local and Executor for what it
// guarantees.
func (l *Local) Exec(ctx context.Context, c Cmd) (Result, error) {
	c, err := prepare(c)
	if err != nil {
		return Result{}, err
	}
	if c.MustStage {
		return Result{}, fmt.Errorf("%w: the local executor does not stage its commands", ErrNotStaged)
	}
	shell := l.shell()
	spec := &spawnSpec{
		argv:      []string{shell, "-c", c.Script},
		env:       c.Env,
		maxOutput: l.MaxOutput,
		grace:     l.grace(),
	}
	if l.Helper == "" {
		res, _, err := run(ctx, c, spec)
		return res, err
	}
	// The reaper: fd 3 its status pipe, fd 4 the read end of a pipe whose
	// write end only rein holds, so it reads EOF when rein is gone.
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("%w: the reaper's control pipe: %w", ErrStart, err)
	}
	defer ctlW.Close()
	defer ctlR.Close()
	spec.argv = append([]string{l.Helper, HelperArg, reaperArg, "--"}, spec.argv...)
	spec.env = encodeEnv(c.Env)
	spec.status = true
	spec.files = []*os.File{ctlR}
	spec.pdeathsig = reaperKill
	spec.beforeKill = func(pid int, exited <-chan struct{}) {
		_ = syscall.Kill(pid, reaperKill) // ESRCH: gone already
		t := time.NewTimer(reaperKillWait)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C: // a stopped or stuck reaper: its group is killed next
		}
	}
	res, status, err := run(ctx, c, spec)
	if err != nil {
		return res, err
	}
	if err := helperStatus(status, l.Helper, res); err != nil {
		return Result{}, err
	}
	return res, nil
}
