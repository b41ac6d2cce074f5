package mcp_test

import (
	"os"
	"testing"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
)

// TestMain lets the test binary serve as the landlock helper, which starts
// the stdio servers in the sandbox (as rein's main does).
func TestMain(m *testing.M) {
	if sandbox.IsHelper() {
		os.Exit(sandbox.HelperMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// newSandbox returns a landlock sandbox for stdio servers with a fresh work
// dir, closed after everything the test started (register it before the
// Set). Where landlock does not work it skips, unless REIN_REQUIRE says
// landlock is required.
func newSandbox(t *testing.T) (*sandbox.Landlock, string) {
	t.Helper()
	_, err := sandbox.LandlockStatus()
	testenv.Need(t, "landlock", err)
	work := t.TempDir()
	l := &sandbox.Landlock{WorkDir: work}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("closing the sandbox: %v", err)
		}
	})
	return l, work
}
