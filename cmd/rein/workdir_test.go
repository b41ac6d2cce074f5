package main

import (
	"os"
	"path/filepath"
	"testing"
)

// workIn makes dir/work and returns it: a work dir beside the audit and
// state dirs a test keeps in dir, since rein refuses them inside the work dir.
func workIn(t testing.TB, dir string) string {
	t.Helper()
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	return work
}
