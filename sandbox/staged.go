package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Staged is what a staged command (Landlock.Stage) wrote, read from its
// overlay's upper dir once it ended: files and links it created or
// changed, and what it deleted (overlayfs whiteouts, and the lower
// entries an opaque directory hides). Nothing of it is in the work dir
// until Apply; Discard drops it. Exactly one of them must be called.
type Staged struct {
	// Changes lists every path changed, parents before children; a
	// deleted directory's whole content is listed, each entry deleted.
	Changes []Change
	// Skipped are paths the command made that are neither files, links
	// nor directories (fifos, sockets, devices): never applied.
	Skipped []string

	dir string // the command's stage dir: removed by Apply and Discard
	// remove removes dir; nil: removeStageDir, at once. The landlock
	// executor's removes it in the background (Close waits for it).
	remove func(dir string)
	upper  string // the overlay's upper dir, inside dir
	lower  string // the work dir
}

// Change is one path a staged command changed.
type Change struct {
	// Path is relative to the work dir, with the OS's separator.
	Path string
	Kind ChangeKind
	// Type is the entry's type (fs.ModeDir, fs.ModeSymlink, or 0 for a
	// regular file): the new one, or for Deleted the old.
	Type fs.FileMode
}

// ChangeKind says what a command did to a path.
type ChangeKind int

const (
	Created ChangeKind = iota + 1
	Modified
	Deleted
)

func (k ChangeKind) String() string {
	switch k {
	case Created:
		return "created"
	case Modified:
		return "modified"
	case Deleted:
		return "deleted"
	}
	return "unknown"
}

// readStaged reads upper, the upper dir of an overlay over lower, into a
// Staged owning dir.
func readStaged(dir, upper, lower string) (*Staged, error) {
	s := &Staged{dir: dir, upper: upper, lower: lower}
	err := filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == upper {
			return nil
		}
		rel, _ := filepath.Rel(upper, p)
		ui, err := d.Info()
		if err != nil {
			return err
		}
		li, lerr := os.Lstat(filepath.Join(lower, rel))
		inLower := lerr == nil
		if isWhiteout(ui) {
			if inLower {
				s.deleteTree(rel, li)
			}
			return nil
		}
		ut := ui.Mode().Type()
		switch {
		case ut == fs.ModeDir:
			if inLower && li.IsDir() {
				if isOpaque(p) {
					s.deleteHidden(rel)
				}
				if li.Mode().Perm() != ui.Mode().Perm() {
					s.Changes = append(s.Changes, Change{rel, Modified, fs.ModeDir})
				}
				return nil
			}
			if inLower {
				s.deleteTree(rel, li)
			}
			s.Changes = append(s.Changes, Change{rel, Created, fs.ModeDir})
			return nil
		case ut == 0 || ut == fs.ModeSymlink:
			if !inLower {
				s.Changes = append(s.Changes, Change{rel, Created, ut})
				return nil
			}
			if li.IsDir() {
				s.deleteTree(rel, li)
				s.Changes = append(s.Changes, Change{rel, Created, ut})
				return nil
			}
			same, err := sameEntry(p, filepath.Join(lower, rel), ui, li)
			if err != nil {
				return err
			}
			if !same {
				s.Changes = append(s.Changes, Change{rel, Modified, ut})
			}
			return nil
		default:
			s.Skipped = append(s.Skipped, rel)
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// deleteTree records rel, which lower holds as li, and all under it as
// deleted, children before their directory.
func (s *Staged) deleteTree(rel string, li fs.FileInfo) {
	if li.IsDir() {
		ents, _ := os.ReadDir(filepath.Join(s.lower, rel))
		for _, e := range ents {
			if ci, err := e.Info(); err == nil {
				s.deleteTree(filepath.Join(rel, e.Name()), ci)
			}
		}
	}
	s.Changes = append(s.Changes, Change{rel, Deleted, li.Mode().Type()})
}

// deleteHidden records as deleted what lower holds under rel, an opaque
// directory of the upper dir, and the upper dir does not: the command
// removed the directory and made it again.
func (s *Staged) deleteHidden(rel string) {
	ents, _ := os.ReadDir(filepath.Join(s.lower, rel))
	for _, e := range ents {
		child := filepath.Join(rel, e.Name())
		if _, err := os.Lstat(filepath.Join(s.upper, child)); err == nil {
			continue // the walk judges it
		}
		if ci, err := e.Info(); err == nil {
			s.deleteTree(child, ci)
		}
	}
}

// sameEntry reports whether upper and lower hold the same file or link:
// overlayfs copies a file up when it is opened for writing, changed or not.
func sameEntry(up, low string, ui, li fs.FileInfo) (bool, error) {
	if ui.Mode() != li.Mode() {
		return false, nil
	}
	if ui.Mode().Type() == fs.ModeSymlink {
		a, err1 := os.Readlink(up)
		b, err2 := os.Readlink(low)
		return err1 == nil && err2 == nil && a == b, nil
	}
	if ui.Size() != li.Size() {
		return false, nil
	}
	a, err := os.Open(up)
	if err != nil {
		return false, err
	}
	defer a.Close()
	b, err := os.Open(low)
	if err != nil {
		return false, nil // unreadable to rein: count it changed
	}
	defer b.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea != nil || eb != nil {
			return ea != nil && eb != nil, nil
		}
	}
}

// Count returns how many files and links (not directories) the command
// created, modified and deleted.
func (s *Staged) Count() (created, modified, deleted int) {
	for _, c := range s.Changes {
		if c.Type == fs.ModeDir {
			continue
		}
		switch c.Kind {
		case Created:
			created++
		case Modified:
			modified++
		case Deleted:
			deleted++
		}
	}
	return
}

// Upper is the directory holding what the command wrote, as it will be
// applied (the overlay's upper dir: whiteouts for deletions), until
// Apply or Discard. Read it, never change it.
func (s *Staged) Upper() string { return s.upper }

// Empty reports whether the command changed nothing.
func (s *Staged) Empty() bool { return len(s.Changes) == 0 && len(s.Skipped) == 0 }

// Discard drops the staged writes.
func (s *Staged) Discard() error {
	if s == nil || s.dir == "" {
		return nil
	}
	if s.remove != nil {
		s.remove(s.dir)
	} else {
		removeStageDir(s.dir)
	}
	s.dir = ""
	return nil
}

// ErrApply marks writes that could not all be applied.
var ErrApply = errors.New("staged writes not applied")

// Apply puts the changes keep accepts into the work dir (keep nil: all)
// and then removes the stage. First before is called on every file and
// link to be changed, created or deleted (its path relative to the work
// dir), parents first: rollback snapshots, which must see each path as it
// was. When before fails nothing is applied. Then deletions, deepest
// first, then directories, files and links, shallowest first: each file
// is written beside its path and renamed over it, with its mode; a link is
// made as a link (its target never followed). Everything goes through an
// os.Root on the work dir, so nothing leads out of it. It returns the
// changes applied; on error, some may have been.
func (s *Staged) Apply(keep func(Change) bool, before func(rel string) error) ([]Change, error) {
	if s.dir == "" {
		return nil, fmt.Errorf("%w: applied or discarded already", ErrApply)
	}
	defer s.Discard()
	var todo []Change
	for _, c := range s.Changes {
		if keep == nil || keep(c) {
			todo = append(todo, c)
		}
	}
	if before != nil {
		for _, c := range todo {
			if c.Type == fs.ModeDir {
				continue
			}
			if err := before(c.Path); err != nil {
				return nil, fmt.Errorf("%w: saving %s first: %w", ErrApply, c.Path, err)
			}
		}
	}
	root, err := os.OpenRoot(s.lower)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrApply, err)
	}
	defer root.Close()
	up, err := os.OpenRoot(s.upper)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrApply, err)
	}
	defer up.Close()
	var done []Change
	var errs []error
	// Deletions: children come before their directory in Changes already;
	// reversed, deepest first among siblings' trees too.
	dels := slices.DeleteFunc(slices.Clone(todo), func(c Change) bool { return c.Kind != Deleted })
	slices.SortStableFunc(dels, func(a, b Change) int { return depth(b.Path) - depth(a.Path) })
	for _, c := range dels {
		if err := root.Remove(c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("deleting %s: %w", c.Path, err))
			continue
		}
		done = append(done, c)
	}
	puts := slices.DeleteFunc(slices.Clone(todo), func(c Change) bool { return c.Kind == Deleted })
	slices.SortStableFunc(puts, func(a, b Change) int { return depth(a.Path) - depth(b.Path) })
	for _, c := range puts {
		if err := put(root, up, c); err != nil {
			errs = append(errs, fmt.Errorf("writing %s: %w", c.Path, err))
			continue
		}
		done = append(done, c)
	}
	if len(errs) > 0 {
		return done, fmt.Errorf("%w: %w", ErrApply, errors.Join(errs...))
	}
	return done, nil
}

func depth(p string) int { return strings.Count(p, string(filepath.Separator)) }

// put makes c.Path in root what it is in up.
func put(root, up *os.Root, c Change) error {
	ui, err := up.Lstat(c.Path)
	if err != nil {
		return err
	}
	cur, cerr := root.Lstat(c.Path)
	switch c.Type {
	case fs.ModeDir:
		if cerr == nil && cur.IsDir() {
			return root.Chmod(c.Path, ui.Mode().Perm())
		}
		if cerr == nil {
			if err := root.Remove(c.Path); err != nil {
				return err
			}
		}
		if err := root.Mkdir(c.Path, ui.Mode().Perm()); err != nil {
			return err
		}
		return root.Chmod(c.Path, ui.Mode().Perm()) // past the umask
	case fs.ModeSymlink:
		target, err := up.Readlink(c.Path)
		if err != nil {
			return err
		}
		tmp := tempBeside(c.Path)
		if err := root.Symlink(target, tmp); err != nil {
			return err
		}
		if cerr == nil && cur.IsDir() {
			_ = root.Remove(c.Path)
		}
		if err := root.Rename(tmp, c.Path); err != nil {
			_ = root.Remove(tmp)
			return err
		}
		return nil
	}
	src, err := up.Open(c.Path)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := tempBeside(c.Path)
	dst, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, ui.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Chmod(ui.Mode().Perm())
	}
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil && cerr == nil && cur.IsDir() {
		err = root.Remove(c.Path)
	}
	if err == nil {
		err = root.Rename(tmp, c.Path)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return err
}

// tempBeside names a temporary file in rel's directory.
func tempBeside(rel string) string {
	return filepath.Join(filepath.Dir(rel), fmt.Sprintf(".%s.rein-stage~", filepath.Base(rel)))
}

// RemoveStageDir removes a stage dir or stage root, whatever overlayfs
// and the command left in it without permissions.
func RemoveStageDir(dir string) { removeStageDir(dir) }
