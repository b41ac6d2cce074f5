//go:build linux

package sandbox_test

import (
	"os"
	"testing"

	"github.com/reinhq/rein/sandbox"
)

// TestMain lets the test binary serve as the landlock helper (as rein's
// main does) and as the probe the escape tests run inside the sandbox.
func TestMain(m *testing.M) {
	if sandbox.IsHelper() {
		os.Exit(sandbox.HelperMain(os.Args[2:]))
	}
	if work := os.Getenv(sessionEnv); work != "" {
		os.Exit(session(work))
	}
	if os.Getenv(probeEnv) == "serve" {
		os.Exit(serveProbe(os.Stdin, os.Stdout))
	}
	if mode := os.Getenv(probeEnv); mode != "" {
		os.Exit(probe(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}
