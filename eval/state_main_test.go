package eval_test

import (
	"os"
	"testing"

	"github.com/reinhq/rein/internal/testenv"
)

// TestMain keeps this package's sessions out of the user's state dir:
// XDG_STATE_HOME is a temporary directory for the whole test binary.
func TestMain(m *testing.M) { os.Exit(testenv.IsolateState(m)) }
