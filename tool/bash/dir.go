package bash

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/tool"
)

// ErrOutside marks a workdir argument that leads outside the work dir.
var ErrOutside = errors.New("outside the working directory")

// resolveDir returns the real path (no symbolic links) of workdir, which is
// relative to root or absolute, and refuses one that is not a directory
// inside root's real path. The result can still change after the check if
// someone swaps a directory for a link; the executor's sandbox, not this
// check, is what holds then.
func resolveDir(root, workdir string) (string, error) {
	if workdir == "" {
		workdir = "."
	}
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("the working directory cannot be used (%w); this is not something a command can fix", err)
	}
	p := workdir
	if !filepath.IsAbs(p) {
		if !filepath.IsLocal(p) {
			return "", outside(workdir)
		}
		p = filepath.Join(rootReal, p)
	}
	real, err := filepath.EvalSymlinks(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: workdir %q: no such directory; create it first or run in \".\"", tool.ErrNotExist, workdir)
	case err != nil:
		return "", fmt.Errorf("workdir %q cannot be used: %w", workdir, cause(err))
	}
	if rel, err := filepath.Rel(rootReal, real); err != nil || !filepath.IsLocal(rel) {
		return "", outside(workdir)
	}
	info, err := os.Stat(real)
	switch {
	case err != nil:
		return "", fmt.Errorf("workdir %q cannot be used: %w", workdir, cause(err))
	case !info.IsDir():
		return "", fmt.Errorf("workdir %q is a file, not a directory", workdir)
	}
	return real, nil
}

func outside(workdir string) error {
	return fmt.Errorf("%w: workdir %q leads outside the working directory; give a directory inside it, relative like \"src\" or \".\"", ErrOutside, workdir)
}

// cause drops the PathError around err, whose path the model already knows.
func cause(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}
