package checkpoint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/checkpoint"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A turn that changes one file, creates another and deletes a third is
// undone: each is as it was before the turn; an earlier turn's work stays.
func TestUndoTheLastTurn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.txt"), "turn 0")
	write(t, filepath.Join(dir, "gone.txt"), "keep me")
	b, err := checkpoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.Save("a.txt") // turn 1
	write(t, filepath.Join(dir, "a.txt"), "turn 1")
	b.Begin() // turn 2
	b.Save("a.txt")
	write(t, filepath.Join(dir, "a.txt"), "turn 2")
	b.Save("a.txt") // a second change in the same turn keeps the first save
	write(t, filepath.Join(dir, "a.txt"), "turn 2, again")
	b.Save("new.txt")
	write(t, filepath.Join(dir, "new.txt"), "new")
	b.Save("gone.txt")
	os.Remove(filepath.Join(dir, "gone.txt"))
	b.Save("same.txt") // saved, never written: not a change
	if got := fmt.Sprint(b.Changed()); got != "[{a.txt changed <nil>} {new.txt created <nil>} {gone.txt deleted <nil>}]" {
		t.Fatalf("changed %s", got)
	}
	for _, c := range b.Undo() {
		if c.Err != nil {
			t.Fatalf("undo %s: %v", c.Path, c.Err)
		}
	}
	for name, want := range map[string]string{"a.txt": "turn 1", "gone.txt": "keep me"} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("the file the turn created is still there (%v)", err)
	}
	if len(b.Undo()) != 0 {
		t.Error("a second undo undid something again")
	}
}

// A path that leads out of the work directory (.., an absolute path, a
// link to outside) is never read nor written, whatever /undo is asked.
func TestUndoStaysInTheWorkdir(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	write(t, secret, "outside")
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	b, err := checkpoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, p := range []string{"../" + filepath.Base(outside) + "/secret.txt", secret, "link/secret.txt"} {
		b.Save(p)
	}
	write(t, secret, "changed by someone else")
	for _, c := range b.Undo() {
		if c.Action != "kept" || c.Err == nil {
			t.Errorf("%s: %s (%v), want kept with a reason", c.Path, c.Action, c.Err)
		}
	}
	if got, _ := os.ReadFile(secret); string(got) != "changed by someone else" {
		t.Fatalf("undo wrote outside the work dir: %q", got)
	}
}
