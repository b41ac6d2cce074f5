//go:build linux

package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/protect"
	"github.com/reinhq/rein/secret"
)

// masks are the credential files and directories hidden from commands,
// and the protected paths (code that runs later: git config and hooks, rc
// files, editor tasks; package protect) that commands may read but not write.
type masks struct {
	files, dirs []string
	ro          []string
}

func (m masks) empty() bool { return m.count() == 0 }

func (m masks) count() int { return len(m.files) + len(m.dirs) + len(m.ro) }

// maxMasks bounds the masks a landlock executor applies (each is a mount
// in the helper's namespace and two arguments of its command line): past
// it, the executor does not start rather than leave a credential file
// unmasked or fail every command with an argument list too long.
const maxMasks = 5000

// gitCode are the parts of a repository whose content makes git run code
// or load settings later; the rest of .git (objects, refs, the index) is
// git's own work and stays writable, so commits still work.
var gitCode = []string{"config", "hooks", "info", "modules", "commondir", "config.worktree"}

// findMasks lists what to hide from commands: every file and directory in
// work whose name says it holds credentials (secret.CredentialFile: .env*,
// *.pem, id_*, .netrc, cloud CLI directories, …), with a symlink so named
// followed to its target when that lies in work, and the credential places
// under home that exist. .git is not walked.
// It stops early, with what it found so far, when ctx ends.
func findMasks(ctx context.Context, work, home string) masks {
	var m masks
	protected := protect.Default()
	add := func(p string, dir bool) {
		if dir {
			m.dirs = append(m.dirs, p)
		} else {
			m.files = append(m.files, p)
		}
	}
	prefix := filepath.Join(work, "x")
	prefix = prefix[:len(prefix)-1] // work and a separator, as WalkDir joins
	// The whole tree, however large: a bound on the walk would leave the
	// credentials past it readable. The walk runs while the model thinks
	// about its first turn (Landlock.Hold).
	_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return filepath.SkipAll
		}
		if err != nil || p == work {
			return nil
		}
		rel := p[len(prefix):] // WalkDir joins names onto work
		if d.IsDir() && d.Name() == ".git" {
			for _, g := range gitCode {
				if _, err := os.Lstat(filepath.Join(p, g)); err == nil {
					m.ro = append(m.ro, filepath.Join(p, g))
				}
			}
			return filepath.SkipDir
		}
		// A file both protected and a credential (.npmrc) is masked: an
		// empty read-only file is both unreadable and unwritable.
		cred := d.Type().IsRegular() && secret.CredentialFile(rel)
		if d.Type()&fs.ModeSymlink == 0 && !cred {
			if _, ok := protected.Match(rel); ok {
				// Read-only as a whole: what is below needs no look.
				m.ro = append(m.ro, p)
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			if !secret.CredentialFile(rel) {
				return nil
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil || !within(real, work) {
				return nil // outside the work dir Landlock refuses it anyway
			}
			if fi, err := os.Stat(real); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
				add(real, fi.IsDir())
			}
		case d.IsDir():
			// A directory all of whose files are credentials (.aws, .ssh).
			if secret.CredentialFile(filepath.Join(rel, "x")) {
				add(p, true)
				return filepath.SkipDir
			}
		case cred:
			add(p, false)
		}
		return nil
	})
	if home != "" {
		for _, p := range CredentialPaths(home) {
			fi, err := os.Lstat(p)
			if err != nil || within(p, work) || within(work, p) {
				continue
			}
			if fi.IsDir() || fi.Mode().IsRegular() {
				add(p, fi.IsDir())
			}
		}
	}
	return m
}

// newMaskSource makes the empty read-only file mounted over masked files,
// in a directory of its own outside every grant.
// It returns the dir's lock (makeHeld) whenever it made the dir.
func newMaskSource() (dir, file string, lock *os.File, err error) {
	dir, lock, err = makeHeld("mask")
	if err != nil {
		return "", "", nil, err
	}
	file = filepath.Join(dir, "empty")
	if err := os.WriteFile(file, nil, 0o444); err != nil {
		return dir, "", lock, err
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		return dir, "", lock, err
	}
	return dir, file, lock, nil
}

// removeMaskSource undoes newMaskSource.
func removeMaskSource(dir string) error {
	if dir == "" {
		return nil
	}
	_ = os.Chmod(dir, 0o700)
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
