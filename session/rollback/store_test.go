package rollback_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/statedir"
	"github.com/reinhq/rein/session/rollback"
)

var update = flag.Bool("u", false, "update golden files")

// TestJournalGolden pins the journal format: one JSON line per path, in
// the order the paths were first named.
func TestJournalGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "alpha\n", "target.txt": "target\n", "bin": binary}, nil)
	chmod(t, filepath.Join(e.work, "bin"), os.ModeSetuid|0o750)
	symlink(t, "target.txt", filepath.Join(e.work, "link.txt"))
	s := e.open(t)
	a := e.agent(t, s)
	a.write("a.txt", "changed")
	a.edit("a.txt", "changed", "again")
	a.write("x/y/new.txt", "new")
	a.write("link.txt", "through")
	for _, p := range []string{"bin", "bin"} {
		if _, err := s.Snapshot(p); err != nil {
			t.Fatal(err)
		}
	}
	must(t, s.Close())
	got, err := os.ReadFile(filepath.Join(e.state, sessionID, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "journal.golden")
	if *update {
		must(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("journal:\n%s\nwant (%s):\n%s", got, golden, want)
	}
}

func TestSnapshotFirstStateWins(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "first"}, nil)
	s := e.open(t)
	id1, err := s.Snapshot("a.txt")
	must(t, err)
	writeTree(t, e.work, map[string]string{"a.txt": "second"})
	id2, err := s.Snapshot("a.txt")
	must(t, err)
	id3, err := s.Snapshot("b.txt")
	must(t, err)
	if id1 != id2 || id1 == id3 {
		t.Errorf("ids %q, %q for a.txt and %q for b.txt; want one id per path", id1, id2, id3)
	}
	e.restore(t, s)
	if got := tree(t, e.work); got != ". dir -rwxr-xr-x\n"+`a.txt file -rw-r--r-- "first"` {
		t.Errorf("after restore: %s; want the first state", got)
	}
}

func TestSnapshotRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"big.txt": strings.Repeat("x", 11), "ok.txt": strings.Repeat("x", 10), "dir/f": "f"}, nil)
	must(t, syscall.Mkfifo(filepath.Join(e.work, "fifo"), 0o644))
	s := e.open(t, rollback.WithMaxFileSize(10))
	tests := []struct {
		path string
		want error
	}{
		{"", rollback.ErrPath},
		{".", rollback.ErrPath},
		{"..", rollback.ErrPath},
		{"../x", rollback.ErrPath},
		{"/etc/passwd", rollback.ErrPath},
		{"a/../b", rollback.ErrPath},
		{"a//b", rollback.ErrPath},
		{"./a", rollback.ErrPath},
		{"a\x00b", rollback.ErrPath},
		{"big.txt", rollback.ErrTooLarge},
		{"dir", rollback.ErrUnsupported},
		{"fifo", rollback.ErrUnsupported}, // and it must not block on the pipe
	}
	for _, tt := range tests {
		if id, err := s.Snapshot(tt.path); !errors.Is(err, tt.want) {
			t.Errorf("Snapshot(%q) = %q, %v; want %v", tt.path, id, err, tt.want)
		}
	}
	if _, err := s.Snapshot("ok.txt"); err != nil {
		t.Errorf("Snapshot of a file at the cap: %v", err)
	}
	must(t, s.Close())
	if _, err := s.Snapshot("ok.txt"); !errors.Is(err, rollback.ErrClosed) {
		t.Errorf("Snapshot after Close: %v, want ErrClosed", err)
	}
	j, err := rollback.Load(e.state, sessionID)
	must(t, err)
	if len(j.Entries) != 1 || j.Entries[0].Path != "ok.txt" || len(j.Notes) != 0 {
		t.Errorf("journal: %+v, notes %q; want only ok.txt: a refused snapshot leaves nothing", j.Entries, j.Notes)
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	e.open(t)
	if _, err := rollback.Open(e.state, sessionID, e.work); !errors.Is(err, rollback.ErrBusy) {
		t.Errorf("Open of a store open elsewhere: %v, want ErrBusy", err)
	}
	for _, bad := range []string{"", "../x", "a/b", "a b"} {
		if _, err := rollback.Open(e.state, bad, e.work); err == nil {
			t.Errorf("Open(session %q) succeeded; want a refusal", bad)
		}
	}
	if _, err := rollback.Open(e.state, "other", filepath.Join(e.work, "missing")); err == nil {
		t.Error("Open with a missing work directory succeeded")
	}
	if info, err := os.Stat(filepath.Join(e.state, sessionID)); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("store directory: %v, %v; want mode 0700", info.Mode(), err)
	}
}

// TestOpenResumes: a session resumed after an interruption goes on with its
// store: what was saved keeps its first state, numbering goes on, and a
// journal line the interruption cut short is dropped.
func TestOpenResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a", "b.txt": "b", "c.txt": "c"}, nil)
	before := tree(t, e.work)
	s := e.open(t)
	e.agent(t, s).write("a.txt", "first run")
	_, err := s.Snapshot("b.txt") // the interruption came before its tool ran
	must(t, err)
	must(t, s.Close())
	data, err := os.ReadFile(e.journal())
	must(t, err)
	must(t, os.WriteFile(e.journal(), data[:len(data)-10], 0o600)) // b.txt's line cut short

	s = e.open(t)
	a := e.agent(t, s)
	if ids := a.write("a.txt", "second run"); ids[0] != "000001" {
		t.Errorf("a.txt again after resuming: id %q, want 000001, its first snapshot", ids)
	}
	// The journal after resuming: a's snapshot 1 and left line 2 (b's cut
	// line 3 dropped, its blob removed), then a's changing 3 and left 4.
	if ids := a.write("c.txt", "second run"); ids[0] != "000005" {
		t.Errorf("c.txt after resuming: id %q, want 000005", ids)
	}
	a.write("b.txt", "second run")
	j, err := rollback.Load(e.state, sessionID)
	must(t, err)
	if len(j.Notes) != 0 || len(j.Damaged) != 0 || len(j.Entries) != 3 {
		t.Errorf("journal after resuming: %+v, notes %q, damaged %q; want 3 whole entries", j.Entries, j.Notes, j.Damaged)
	}
	if got := summary(e.restore(t, s)); got != "restored b.txt\nrestored c.txt\nrestored a.txt\n" {
		t.Errorf("restore after resuming:\n%s", got)
	}
	if tree(t, e.work) != before {
		t.Errorf("after resuming and restoring:\n%s\nwant\n%s", tree(t, e.work), before)
	}

	other := newEnv(t, nil, nil)
	if _, err := rollback.Open(e.state, sessionID, other.work); err == nil {
		t.Error("Open of a store for another work directory succeeded")
	}
	must(t, os.WriteFile(e.journal(), []byte("garbage\n"), 0o600))
	if _, err := rollback.Open(e.state, sessionID, e.work); err == nil {
		t.Error("Open of a store with a damaged journal succeeded")
	}
}

func TestRestoreRefusesARunningSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a"}, nil)
	s := e.open(t)
	e.agent(t, s).write("a.txt", "b")
	if _, err := rollback.Restore(e.state, sessionID); !errors.Is(err, rollback.ErrBusy) {
		t.Fatalf("Restore of an open store: %v, want ErrBusy", err)
	}
	if got := tree(t, e.work); got != ". dir -rwxr-xr-x\n"+`a.txt file -rw-r--r-- "b"` {
		t.Errorf("a refused restore changed the work directory: %s", got)
	}
	if got := summary(e.restore(t, s)); got != "restored a.txt\n" {
		t.Errorf("after Close: %s", got)
	}
}

func TestUnknownSessionAndList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	if ids, err := rollback.Sessions(e.state); err != nil || len(ids) != 0 {
		t.Errorf("Sessions of a missing directory: %q, %v; want none", ids, err)
	}
	for _, id := range []string{"20260101T000000Z-aaaa", "20260301T000000Z-cccc", "20260201T000000Z-bbbb"} {
		s, err := rollback.Open(e.state, id, e.work)
		must(t, err)
		must(t, s.Close())
		time.Sleep(2 * time.Millisecond) // creation times must differ; no timing is asserted
	}
	must(t, os.Mkdir(filepath.Join(e.state, "no-manifest"), 0o700))
	ids, err := rollback.Sessions(e.state)
	must(t, err)
	if strings.Join(ids, " ") != "20260201T000000Z-bbbb 20260301T000000Z-cccc 20260101T000000Z-aaaa" {
		t.Errorf("Sessions = %q; want most recently created first, the store without a manifest left out", ids)
	}
	if _, err := rollback.Load(e.state, "20990101T000000Z-none"); !errors.Is(err, rollback.ErrUnknownSession) {
		t.Errorf("Load of an unknown session: %v", err)
	}
	if _, err := rollback.Restore(e.state, "no-manifest"); !errors.Is(err, rollback.ErrUnknownSession) {
		t.Errorf("Restore of a store without a manifest: %v", err)
	}
	if _, err := rollback.Load(e.state, "../state"); err == nil || errors.Is(err, rollback.ErrUnknownSession) {
		t.Errorf("Load(../state): %v; want a bad id", err)
	}
}

func TestDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	if d, err := rollback.Dir(); err != nil || d != "/xdg/state/rein/rollback" {
		t.Errorf("Dir = %q, %v", d, err)
	}
	t.Setenv("XDG_STATE_HOME", "relative")
	t.Setenv("HOME", "/home/u")
	// The home fallback is statedir's (tested there); a test binary never
	// reaches it, so no test writes into the user's state dir.
	if d, err := rollback.Dir(); !errors.Is(err, statedir.ErrUnderTest) {
		t.Errorf("Dir under test with a relative XDG_STATE_HOME = %q, %v; want ErrUnderTest", d, err)
	}
}

func TestPlanChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a", "b.txt": "b"}, nil)
	s := e.open(t)
	a := e.agent(t, s)
	a.write("a.txt", "changed")
	a.write("new/c.txt", "c")
	a.write("b.txt", "b")
	must(t, s.Close())
	during := tree(t, e.work)
	j, err := rollback.Load(e.state, sessionID)
	must(t, err)
	reports, err := j.Plan()
	must(t, err)
	if got, want := summary(reports), "unchanged b.txt\ndeleted new/c.txt\nrestored a.txt\n"; got != want {
		t.Errorf("Plan:\n%s\nwant:\n%s", got, want)
	}
	if tree(t, e.work) != during {
		t.Error("Plan changed the work directory")
	}
}

// TestStoreCheckLinked: a store whose state directory was deleted, or
// whose directory was renamed away and replaced, says so.
func TestStoreCheckLinked(t *testing.T) {
	t.Parallel()
	for _, replace := range []bool{false, true} {
		e := newEnv(t, nil, nil)
		s := e.open(t)
		must(t, s.CheckLinked())
		if replace {
			must(t, os.Rename(e.state, e.state+".old"))
			s2, err := rollback.Open(e.state, sessionID, e.work)
			must(t, err)
			must(t, s2.Close())
		} else {
			must(t, os.RemoveAll(e.state))
		}
		want := "was deleted"
		if replace {
			want = "was replaced by another file"
		}
		if err := s.CheckLinked(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("replace %v: CheckLinked: %v; want %q", replace, err, want)
		}
	}
}
