// Package testenv lets tests that need a component of the machine (Docker,
// Chromium, Landlock, busybox) skip with a message on a developer's laptop
// where it is missing, and fail in CI, where REIN_REQUIRE=all says every
// component must be there: CI cannot pass by skipping.
package testenv

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// Required reports whether the environment demands component: REIN_REQUIRE
// is "all" or a comma-separated list that names it.
func Required(component string) bool {
	v := os.Getenv("REIN_REQUIRE")
	if v == "all" {
		return true
	}
	return slices.Contains(strings.Split(v, ","), component)
}

// Need skips the test when err says component is unavailable, or fails it
// when the component is required. A nil err means it is there.
func Need(tb testing.TB, component string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if Required(component) {
		tb.Fatalf("%s is required here (REIN_REQUIRE=%s) but unavailable: %v", component, os.Getenv("REIN_REQUIRE"), err)
	}
	tb.Skipf("%s unavailable, skipping (set REIN_REQUIRE=%s to make this a failure): %v", component, component, err)
}

// IsolateState points XDG_STATE_HOME at a new temporary directory for the
// whole test binary, runs m and removes the directory: a session built by
// a test without explicit audit or rollback directories writes there, not
// into the user's state dir (statedir.Root refuses that dir under test).
// Use it as a package's TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.IsolateState(m)) }
func IsolateState(m interface{ Run() int }) int {
	dir, err := os.MkdirTemp("", "rein-test-state-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("XDG_STATE_HOME", dir); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	return m.Run()
}
