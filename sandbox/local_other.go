//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"runtime"
)

// Exec returns ErrUnsupported: Local relies on Linux process controls.
func (l *Local) Exec(ctx context.Context, c Cmd) (Result, error) {
	return Result{}, fmt.Errorf("%w: the local executor runs on Linux, not %s", ErrUnsupported, runtime.GOOS)
}
