//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
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
	m := findMasks(context.Background(), work, "")
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
		findMasks(context.Background(), work, "")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
}

// A build stopped by Close (its context ended) stops its walk and builds
// nothing: no masks half found are ever used, no temp dir is left.
func TestBuildStopped(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, ".env"), []byte("X=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if m := findMasks(ctx, work, ""); !m.empty() {
		t.Errorf("a stopped walk went on: %+v", m)
	}
	l := &Landlock{WorkDir: work}
	set, err := l.settings()
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.buildState(ctx, set)
	if !errors.Is(err, ErrStart) || st != nil {
		t.Fatalf("buildState on a stopped build: %v, %v", st, err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
		t.Errorf("left by a stopped build: %v", left)
	}
}

// More masks than a helper can take refuse the executor with the reason,
// before any command runs, instead of leaving some unmasked.
func TestTooManyMasks(t *testing.T) {
	_, err := LandlockStatus()
	testenv.Need(t, "landlock", err)
	work := t.TempDir()
	for i := range maxMasks + 1 {
		d := filepath.Join(work, fmt.Sprintf("d%05d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, ".env"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l := &Landlock{WorkDir: work}
	defer l.Close()
	_, err = l.Exec(t.Context(), Cmd{Script: "cat d00000/.env; echo ran", Dir: work, Timeout: time.Minute})
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "more than 5000") {
		t.Fatalf("Exec: %v, want ErrStart saying how many masks", err)
	}
}
