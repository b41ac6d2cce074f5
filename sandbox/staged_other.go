//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"io/fs"
	"os"
)

func isWhiteout(fs.FileInfo) bool { return false }
func isOpaque(string) bool        { return false }

func removeStageDir(dir string) { _ = os.RemoveAll(dir) }

// StageErr: nothing is staged off Linux.
func (l *Landlock) StageErr() error { return nil }

// StageStatus: staging is Linux's.
func StageStatus() error {
	return fmt.Errorf("%w: staged writes need Linux's overlayfs", ErrUnsupported)
}

// StageProbe: staging is Linux's.
func StageProbe(context.Context, string) error { return StageStatus() }
