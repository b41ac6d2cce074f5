//go:build !linux

package sandbox

import (
	"io/fs"
	"os"
)

func isWhiteout(fs.FileInfo) bool { return false }
func isOpaque(string) bool        { return false }

func removeStageDir(dir string) { _ = os.RemoveAll(dir) }

// StageErr: nothing is staged off Linux.
func (l *Landlock) StageErr() error { return nil }
