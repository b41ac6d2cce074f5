//go:build !unix

package rollback

import (
	"errors"
	"fmt"
	"os"
)

// lockFile opens name. Where there is no flock, a store is not locked: a
// rollback of a session that is still running is not refused.
func lockFile(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the session store: %w", err)
	}
	return f, nil
}

// lockToRestore is lockFile, or the lock file opened read-only when the
// store cannot be written.
func lockToRestore(name string) (*os.File, error) {
	f, err := lockFile(name)
	if err == nil || !errors.Is(err, os.ErrPermission) {
		return f, err
	}
	return os.Open(name)
}
