// Package linkcheck tells whether an open file is still linked at the path
// it was opened by: not deleted (its directory removed with it), not
// renamed away and replaced. rein checks its audit log and its rollback
// journal before each intent, so that it never goes on writing records
// nobody will find.
package linkcheck

import (
	"errors"
	"fmt"
	"os"
)

// ErrUnlinked says the file is no longer at its path.
var ErrUnlinked = errors.New("no longer at its path")

// Check reports, as an error wrapping ErrUnlinked, when f (opened as name)
// has no link left or name now names another file (or nothing). It
// compares the device and inode of the open file with those at name, and
// the open file's link count.
func Check(f *os.File, name string) error {
	open, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if links(open) == 0 {
		return fmt.Errorf("%s was deleted: %w", name, ErrUnlinked)
	}
	now, err := os.Stat(name)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s was deleted: %w", name, ErrUnlinked)
	}
	if err != nil {
		return fmt.Errorf("%s cannot be checked: %w", name, err)
	}
	if !os.SameFile(open, now) {
		return fmt.Errorf("%s was replaced by another file: %w", name, ErrUnlinked)
	}
	return nil
}
