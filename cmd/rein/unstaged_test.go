package main

import (
	"os"
	"path/filepath"
	"testing"
)

// unstaged writes a user config under configHome (XDG_CONFIG_HOME) that
// turns staged writes off. Tests that watch the work dir while a command
// runs (a pid file, a "started" marker) or write into it for the command
// to see need it: a staged command's writes appear only when it ends, and
// files made in the work dir meanwhile are not promised to reach it.
func unstaged(tb testing.TB, configHome string) {
	tb.Helper()
	f := filepath.Join(configHome, "rein", "config.toml")
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(f, []byte("[sandbox]\nunstaged = true\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
}
