package rollback_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/session/rollback"
)

// FuzzRestore restores from a journal and a blob the fuzzer writes, into a
// work directory with a link that leads out. Whatever the journal says,
// Restore and Plan must not panic, and nothing outside the work directory
// may change.
func FuzzRestore(f *testing.F) {
	sum := "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae" // SHA-256 of "foo"
	for _, j := range []string{
		`{"seq":1,"path":"a.txt","kind":"file","mode":"0644","size":3,"sha256":"` + sum + `"}`,
		`{"seq":1,"path":"out/x","kind":"file","mode":"0644","size":3,"sha256":"` + sum + `"}`,
		`{"seq":1,"path":"out/new/x","kind":"file","mode":"0644","size":3,"sha256":"` + sum + `"}`,
		`{"seq":1,"path":"out/x","kind":"absent"}`,
		`{"seq":1,"path":"out","kind":"absent"}`,
		`{"seq":1,"path":"out/x","kind":"symlink","target":"/etc/passwd"}`,
		`{"seq":1,"path":"sub/b.txt","kind":"absent","dirs":["sub"]}`,
		`{"seq":1,"path":"rel/x","kind":"absent"}`,
		`{"seq":1,"path":"rel/x","kind":"file","mode":"7777","size":3,"sha256":"` + sum + `"}`,
		`{"seq":1,"path":"../outside/x","kind":"absent"}`,
		`{"seq":1,"path":"a.txt","kind":"symlink","target":"../outside/x"}` + "\n" + `{"seq":2,"path":"a.txt/x","kind":"absent"}`,
	} {
		f.Add([]byte(j+"\n"), []byte("foo"))
	}
	f.Fuzz(func(t *testing.T, journal, blob []byte) {
		e := newEnv(t, map[string]string{"a.txt": "a", "sub/b.txt": "b"}, map[string]string{"x": "outside x", "a.txt": "outside a"})
		symlink(t, e.outside, filepath.Join(e.work, "out"))
		symlink(t, "../outside", filepath.Join(e.work, "rel"))
		s, err := rollback.Open(e.state, sessionID, e.work)
		must(t, err)
		must(t, s.Close())
		must(t, os.WriteFile(e.journal(), journal, 0o600))
		must(t, os.WriteFile(e.blob("000001"), blob, 0o600))
		must(t, os.WriteFile(e.blob("000002"), blob, 0o600))
		outside := tree(t, e.outside)
		j, err := rollback.Load(e.state, sessionID)
		must(t, err)
		if _, err := j.Plan(); err != nil {
			t.Fatal(err)
		}
		if _, err := j.Restore(); err != nil {
			t.Fatal(err)
		}
		if got := tree(t, e.outside); got != outside {
			t.Fatalf("the restore changed the directory outside:\n%s\nwas\n%s", got, outside)
		}
	})
}
