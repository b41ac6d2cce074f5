//go:build linux

package sandbox

import "context"

// Exec runs c.Script with the shell. See Local and Executor for what it
// guarantees.
func (l *Local) Exec(ctx context.Context, c Cmd) (Result, error) {
	c, err := prepare(c)
	if err != nil {
		return Result{}, err
	}
	shell := l.shell()
	res, _, err := run(ctx, c, &spawnSpec{
		argv:      []string{shell, "-c", c.Script},
		env:       c.Env,
		maxOutput: l.MaxOutput,
		grace:     l.grace(),
	})
	return res, err
}
