//go:build !linux

package docker

import (
	"context"
	"errors"
	"fmt"

	"github.com/reinhq/rein/sandbox"
)

type nsState struct{}

func (n *nsState) close() {}

func stageSupported() error {
	return errors.New("staging the docker backend's commands needs Linux's overlayfs")
}

func egressSupported() error {
	return errors.New("the egress proxy for the docker backend needs Linux")
}

func (e *Executor) initStage() error { return stageSupported() }

func (e *Executor) enter(context.Context, string) (*nsState, error) {
	if e.opts.Egress != nil {
		return nil, egressSupported()
	}
	return nil, nil
}

func (e *Executor) execStaged(ctx context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	if c.MustStage {
		return sandbox.Result{}, fmt.Errorf("%w: %w", sandbox.ErrNotStaged, stageSupported())
	}
	return e.execOnce(ctx, c)
}

// StageStatus: staging is Linux's.
func StageStatus() error { return stageSupported() }

// EgressStatus: the proxy in a container is Linux's.
func EgressStatus() error { return egressSupported() }
