package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestHistoryKeptAcrossRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rein", "history")
	h, err := OpenHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"first", "two\nlines", "two\nlines", "", "last"} {
		if err := h.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	again, err := OpenHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	// A repeat of the last message and an empty one are not kept; a
	// message of two lines is one entry.
	if want := []string{"first", "two\nlines", "last"}; !slices.Equal(again.Entries(), want) {
		t.Fatalf("a second run reads %q, want %q", again.Entries(), want)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("the history file is %v, want private (0600)", fi.Mode().Perm())
	}
}

func TestHistoryBadLinesSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	if err := os.WriteFile(path, []byte("\"ok\"\nnot json\n{\"a\":1}\n\"torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ok"}; !slices.Equal(h.Entries(), want) {
		t.Fatalf("read %q, want %q", h.Entries(), want)
	}
}

// The file does not grow without bound: past twice MaxHistory lines it is
// rewritten with the last MaxHistory.
func TestHistoryBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	h, err := OpenHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2*MaxHistory + 5 {
		if err := h.Add(fmt.Sprint("m", i)); err != nil {
			t.Fatal(err)
		}
	}
	again, err := OpenHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	got := again.Entries()
	if len(got) != MaxHistory || got[len(got)-1] != fmt.Sprint("m", 2*MaxHistory+4) {
		t.Fatalf("kept %d entries ending %q, want %d ending m%d", len(got), got[len(got)-1], MaxHistory, 2*MaxHistory+4)
	}
	if again.lines > 2*MaxHistory {
		t.Fatalf("the file has %d lines, more than %d", again.lines, 2*MaxHistory)
	}
}

// A history that cannot be written says so; the message stays for this run.
func TestHistoryUnwritable(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistory(filepath.Join(blocker, "history"))
	if err == nil {
		t.Log("reading under a file is not an error on this system")
	}
	if err := h.Add("x"); err == nil {
		t.Fatal("Add under a file: want an error")
	}
	if !slices.Equal(h.Entries(), []string{"x"}) {
		t.Fatalf("entries %q, want the message kept for this run", h.Entries())
	}
}
