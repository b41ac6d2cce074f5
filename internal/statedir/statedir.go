// Package statedir resolves rein's state directory, where the audit logs
// and the rollback snapshots of sessions go by default:
// $XDG_STATE_HOME/rein, else ~/.local/state/rein.
//
// In a test binary (testing.Testing) it refuses to fall back to the home
// directory: a test that builds a session without saying where its state
// goes would otherwise write into the real user's state dir, where rein
// rollback and rein sessions then list it as the user's. Such a test must
// set XDG_STATE_HOME (testenv.IsolateState does it for a whole package) or
// pass its directories explicitly.
package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// ErrUnderTest is returned by Root in a test binary when XDG_STATE_HOME
// is not set to an absolute path.
var ErrUnderTest = errors.New("a test may not use the user's state directory: set XDG_STATE_HOME to a temporary directory (testenv.IsolateState) or pass the directory explicitly")

// Root returns rein's state directory: $XDG_STATE_HOME/rein when
// XDG_STATE_HOME is absolute, else ~/.local/state/rein.
func Root() (string, error) {
	return resolve(os.Getenv("XDG_STATE_HOME"), os.UserHomeDir, testing.Testing())
}

// resolve is Root with its inputs given: the XDG_STATE_HOME value, how to
// find the home directory, and whether this is a test binary.
func resolve(xdg string, home func() (string, error), underTest bool) (string, error) {
	if filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "rein"), nil
	}
	if underTest {
		return "", ErrUnderTest
	}
	h, err := home()
	if err != nil {
		return "", fmt.Errorf("no home directory for rein's state (%w): set XDG_STATE_HOME", err)
	}
	return filepath.Join(h, ".local", "state", "rein"), nil
}
