//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
)

type landlockState struct{}

type stateBuild struct{}

// Exec returns ErrUnsupported: Landlock is Linux's.
func (l *Landlock) Exec(ctx context.Context, c Cmd) (Result, error) {
	return Result{}, fmt.Errorf("%w: the landlock executor runs on Linux, not %s", ErrUnsupported, runtime.GOOS)
}

// Prepare returns ErrUnsupported: Landlock is Linux's.
func (l *Landlock) Prepare(ctx context.Context) error {
	return fmt.Errorf("%w: the landlock executor runs on Linux, not %s", ErrUnsupported, runtime.GOOS)
}

// Warm does nothing here.
func (l *Landlock) Warm(context.Context) {}

// Close does nothing here.
func (l *Landlock) Close() error { return nil }

// HelperMain fails: there is no sandbox to set up here.
func HelperMain(args []string) int {
	fmt.Fprintf(os.Stderr, "rein sandbox: the landlock helper runs on Linux, not %s\n", runtime.GOOS)
	return 126
}

// LandlockStatus returns ErrUnsupported.
func LandlockStatus() (abi int, err error) {
	return 0, fmt.Errorf("%w: Landlock is Linux's, this is %s", ErrUnsupported, runtime.GOOS)
}

// Process is a Program running in the sandbox; there is none here.
type Process struct {
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
}

// Done is closed: no program runs here.
func (p *Process) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Err returns nil.
func (p *Process) Err() error { return nil }

// Kill does nothing.
func (p *Process) Kill() {}

// Start returns ErrUnsupported: Landlock is Linux's.
func (l *Landlock) Start(ctx context.Context, prog Program) (*Process, error) {
	return nil, fmt.Errorf("%w: the landlock executor runs on Linux, not %s", ErrUnsupported, runtime.GOOS)
}
