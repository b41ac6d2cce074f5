package protect_test

import (
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/protect"
)

// repoPaths returns the paths of this repository below the module root,
// relative and slash-separated, .git's contents left out: a real tree of
// the size run_bash's watch and the sandbox's mask walk go through.
func repoPaths(tb testing.TB) []string {
	tb.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		tb.Fatal(err)
	}
	var paths []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		paths = append(paths, filepath.ToSlash(rel))
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil || len(paths) < 100 {
		tb.Fatalf("walking the repository: %d paths, %v", len(paths), err)
	}
	return paths
}

// BenchmarkMatch matches every path of the repository once per op, with
// the built-in list and with two extra rules of a user's.
func BenchmarkMatch(b *testing.B) {
	paths := repoPaths(b)
	for _, c := range []struct {
		name string
		l    *protect.List
	}{
		{"list=builtin", protect.Default()},
		{"list=extra", protect.Default().With(protect.Rule{Pattern: "deploy/", Why: "x"}, protect.Rule{Pattern: "*.key", Why: "y"})},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for _, p := range paths {
					c.l.Match(p)
				}
			}
			b.ReportMetric(float64(len(paths)), "paths/op")
		})
	}
}
