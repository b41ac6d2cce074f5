//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// plantTree makes dirs directories of files files each under work/a_deps
// (walked before most of a project, as node_modules is), and returns the
// number of entries made.
func plantTree(tb testing.TB, work string, dirs, files int) int {
	tb.Helper()
	for d := range dirs {
		dir := filepath.Join(work, "a_deps", fmt.Sprintf("pkg%05d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		for f := range files {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.js", f)), nil, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return dirs * (files + 1)
}

// A work dir of any size is masked whole: credential files and protected
// paths walked after tens of thousands of other entries are found as the
// first ones are (the walk once stopped at 50,000 entries and left the
// rest readable).
func TestFindMasksWholeTree(t *testing.T) {
	if testing.Short() {
		t.Skip("plants 66,000 files")
	}
	work := t.TempDir()
	if n := plantTree(t, work, 6000, 10); n <= 50000 {
		t.Fatalf("the tree has %d entries, not more than the old bound", n)
	}
	late := map[string]string{
		"z_service/.env":             "f",
		"z_service/deploy/tls.key":   "f",
		"z_service/.aws/credentials": "d",
		"z_service/.git/hooks/x":     "ro",
	}
	for rel := range late {
		p := filepath.Join(work, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m := findMasks(work, "")
	for rel, kind := range late {
		p := filepath.Join(work, rel)
		var ok bool
		switch kind {
		case "f":
			ok = slices.Contains(m.files, p)
		case "d":
			ok = slices.Contains(m.dirs, filepath.Dir(p))
		case "ro":
			ok = slices.Contains(m.ro, filepath.Join(work, "z_service/.git/hooks"))
		}
		if !ok {
			t.Errorf("%s (walked last) is not masked: files %v dirs %v ro %v", rel, m.files, m.dirs, m.ro)
		}
	}
	// The control: nothing of the planted deps is masked.
	if len(m.files) != 2 || len(m.dirs) != 1 {
		t.Errorf("masks beyond the planted credentials: files %v dirs %v", m.files, m.dirs)
	}
}

// BenchmarkFindMasks walks a work dir of 22,000 entries (2,000
// directories of 10 files) for credential files and protected paths, as
// every landlock executor does once.
func BenchmarkFindMasks(b *testing.B) {
	work := b.TempDir()
	n := plantTree(b, work, 2000, 10)
	b.ResetTimer()
	for b.Loop() {
		findMasks(work, "")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
}
