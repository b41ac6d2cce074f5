//go:build !unix

package rollback

import (
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
