package udiff_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/udiff"
)

func TestUnified(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, old, new, want string }{
		{"same", "a\nb\n", "a\nb\n", ""},
		{"new file", "", "one\ntwo\n", "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+one\n+two\n"},
		{"one line changed", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nfive\n6\n7\n8\n",
			"--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"emptied", "x\n", "", "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-x\n"},
		{"no final newline", "a\nb", "a\nc", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
	} {
		if got := udiff.Unified("f", c.old, c.new); got != c.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

// Two changes far apart are two hunks; near each other, one.
func TestHunks(t *testing.T) {
	t.Parallel()
	var old, far, near []string
	for i := range 30 {
		old = append(old, string(rune('a'+i%26)))
	}
	far = append([]string(nil), old...)
	far[2], far[25] = "X", "Y"
	near = append([]string(nil), old...)
	near[10], near[14] = "X", "Y"
	j := func(ls []string) string { return strings.Join(ls, "\n") + "\n" }
	if h := udiff.Hunks(j(old), j(far)); len(h) != 2 || h[0].Header() != "@@ -1,6 +1,6 @@" || h[1].Header() != "@@ -23,7 +23,7 @@" {
		t.Fatalf("far: %d hunks %+v", len(h), h)
	}
	if h := udiff.Hunks(j(old), j(near)); len(h) != 1 || h[0].Header() != "@@ -8,11 +8,11 @@" {
		t.Fatalf("near: %+v", h)
	}
}

// The diff applies: patch(1) turns the old text into the new one, for
// texts built to have insertions, deletions and moves.
func TestPatchApplies(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("no patch(1) here")
	}
	texts := []string{
		"", "one\n", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n", "a\nc\nd\nX\ne\nf\nh\ni\nj\nk\nl\n",
		"j\ni\nh\ng\nf\ne\nd\nc\nb\na\n", "a\nb\nc", "a\na\na\nb\na\na\n",
	}
	dir := t.TempDir()
	for i, old := range texts {
		for j, new := range texts {
			d := udiff.Unified("f", old, new)
			f := filepath.Join(dir, "f")
			if err := os.WriteFile(f, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			if d == "" {
				if old != new {
					t.Errorf("%d→%d: no diff for different texts", i, j)
				}
				continue
			}
			cmd := exec.Command("patch", "-s", "-f", f)
			cmd.Stdin = strings.NewReader(d)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%d→%d: patch: %v %s\n%s", i, j, err, out, d)
				continue
			}
			if got, _ := os.ReadFile(f); string(got) != new {
				t.Errorf("%d→%d: patched to %q, want %q\n%s", i, j, got, new, d)
			}
		}
	}
}

// A large text with every line changed stays quick: the search stops at
// MaxEdits and the rest is shown as replaced.
func TestBoundedWork(t *testing.T) {
	t.Parallel()
	var a, b strings.Builder
	for i := range 20000 {
		a.WriteString("a" + strings.Repeat("x", i%7) + "\n")
		b.WriteString("b" + strings.Repeat("y", i%5) + "\n")
	}
	d := udiff.Unified("big", a.String(), b.String())
	if strings.Count(d, "\n-") != 20000 || strings.Count(d, "\n+") != 20001 { // +++ counts once
		t.Fatalf("want every line replaced, got %d - and %d +", strings.Count(d, "\n-"), strings.Count(d, "\n+"))
	}
}
