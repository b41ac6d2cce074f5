//go:build linux

package sandbox_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
)

// newStaged is a landlock executor that stages; it skips where no
// overlay can be mounted (unless REIN_REQUIRE names overlay).
func newStaged(t *testing.T) (*sandbox.Landlock, string) {
	t.Helper()
	l, work := newLandlock(t, &sandbox.Landlock{Stage: true})
	if _, err := l.Exec(t.Context(), sandbox.Cmd{Script: "true", Dir: work}); err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if err := l.StageErr(); err != nil {
		testenv.Need(t, "overlay", err)
	}
	return l, work
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func changes(s *sandbox.Staged) []string {
	var out []string
	for _, c := range s.Changes {
		out = append(out, c.Kind.String()+" "+filepath.ToSlash(c.Path))
	}
	slices.Sort(out)
	return out
}

// TestStagedWritesWaitForApply: a staged command's writes reach the work
// dir only when applied; the command reads its own writes meanwhile.
func TestStagedWritesWaitForApply(t *testing.T) {
	l, work := newStaged(t)
	write(t, filepath.Join(work, "keep"), "k")
	write(t, filepath.Join(work, "edit"), "old")
	write(t, filepath.Join(work, "same"), "s")
	write(t, filepath.Join(work, "d/a"), "a")
	write(t, filepath.Join(work, "d/e/b"), "b")
	script := `echo new > edit && cat edit && echo n > made && mkdir -p n/m && ln -s ../keep n/m/l && rm -r d && touch same && cat same >/dev/null && : >> same`
	res, err := l.Exec(t.Context(), sandbox.Cmd{Script: script, Dir: work, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if res.ExitCode != 0 || res.Stdout != "new\n" {
		t.Fatalf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res.Staged == nil {
		t.Fatal("no Staged result")
	}
	if b, _ := os.ReadFile(filepath.Join(work, "edit")); string(b) != "old" {
		t.Errorf("edit is %q before Apply; the write went through", b)
	}
	if _, err := os.Stat(filepath.Join(work, "d/e/b")); err != nil {
		t.Errorf("d/e/b gone before Apply: %v", err)
	}
	want := []string{"created made", "created n", "created n/m", "created n/m/l", "deleted d", "deleted d/a", "deleted d/e", "deleted d/e/b", "modified edit"}
	if got := changes(res.Staged); !slices.Equal(got, want) {
		t.Errorf("changes\n got %q\nwant %q", got, want)
	}
	var saved []string
	done, err := res.Staged.Apply(nil, func(rel string) error { saved = append(saved, filepath.ToSlash(rel)); return nil })
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if len(done) != len(want) {
		t.Errorf("applied %d changes, want %d", len(done), len(want))
	}
	slices.Sort(saved)
	if w := []string{"d/a", "d/e/b", "edit", "made", "n/m/l"}; !slices.Equal(saved, w) {
		t.Errorf("before called on %q, want %q", saved, w)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "edit")); string(b) != "new\n" {
		t.Errorf("edit is %q after Apply", b)
	}
	if _, err := os.Stat(filepath.Join(work, "d")); !os.IsNotExist(err) {
		t.Errorf("d still there after Apply: %v", err)
	}
	if target, err := os.Readlink(filepath.Join(work, "n/m/l")); err != nil || target != "../keep" {
		t.Errorf("link: %q, %v", target, err)
	}
	// The next command sees the applied state, with no overlay left.
	res, err = l.Exec(t.Context(), sandbox.Cmd{Script: `cat edit; ls`, Dir: work})
	if err != nil || !strings.HasPrefix(res.Stdout, "new\n") {
		t.Fatalf("after apply: %q %v", res.Stdout, err)
	}
	if err := res.Staged.Discard(); err != nil {
		t.Fatal(err)
	}
}

// TestStagedDiscard: discarded writes never reach the work dir.
func TestStagedDiscard(t *testing.T) {
	l, work := newStaged(t)
	write(t, filepath.Join(work, "f"), "f")
	res, err := l.Exec(t.Context(), sandbox.Cmd{Script: `rm -rf ./* .[!.]* ; echo x > g; ls | wc -l`, Dir: work})
	if err != nil || res.Stdout != "1\n" {
		t.Fatalf("%q %q %v", res.Stdout, res.Stderr, err)
	}
	if err := res.Staged.Discard(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(work)
	if len(ents) != 1 || ents[0].Name() != "f" {
		t.Errorf("work dir after discard: %v", ents)
	}
	var n int
	_ = fs.WalkDir(os.DirFS(os.TempDir()), ".", func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() && strings.HasPrefix(d.Name(), "rein-stage-") {
			n++
		}
		if p != "." && d != nil && d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	_ = n
}
