package rollback_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/session/rollback"
)

// binary is content that is not text: NUL bytes and invalid UTF-8.
const binary = "\x00\x01\xff\xfe PNG\x00\r\n\x1a\n\x80"

// TestRollbackUndoesTheSession runs the real file tools through a store, the
// way the loop does, then restores, and checks that the work directory is
// exactly as before (contents, modes, links, directories), that each path
// is reported as expected, and that a second restore changes nothing.
func TestRollbackUndoesTheSession(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		prep  func(t *testing.T, e env) // before the session
		run   func(t *testing.T, e env, a *agent)
		force bool   // what run did after the agent's calls is overwritten
		want  string // the reports, newest first
	}{{
		name:  "a file modified twice",
		files: map[string]string{"a.txt": "one\ntwo\n"},
		run: func(t *testing.T, e env, a *agent) {
			a.write("a.txt", "replaced\n")
			a.edit("a.txt", "replaced", "edited")
		},
		want: "restored a.txt\n",
	}, {
		name: "a file created then modified",
		run: func(t *testing.T, e env, a *agent) {
			a.write("new.txt", "hello\n")
			a.edit("new.txt", "hello", "bye")
		},
		want: "deleted new.txt\n",
	}, {
		name:  "a file that existed and was emptied",
		files: map[string]string{"a.txt": "content\n"},
		run:   func(t *testing.T, e env, a *agent) { a.write("a.txt", "") },
		want:  "restored a.txt\n",
	}, {
		name:  "an empty file that was filled",
		files: map[string]string{"empty.txt": ""},
		run:   func(t *testing.T, e env, a *agent) { a.write("empty.txt", "now full") },
		want:  "restored empty.txt\n",
	}, {
		name:  "binary content",
		files: map[string]string{"img.bin": binary},
		run:   func(t *testing.T, e env, a *agent) { a.write("img.bin", "text now") },
		want:  "restored img.bin\n",
	}, {
		name:  "mode bits",
		files: map[string]string{"secret.txt": "s", "run.sh": "#!/bin/sh\n"},
		prep: func(t *testing.T, e env) {
			chmod(t, filepath.Join(e.work, "secret.txt"), 0o600)
			chmod(t, filepath.Join(e.work, "run.sh"), os.ModeSetgid|0o755)
		},
		run: func(t *testing.T, e env, a *agent) {
			a.write("secret.txt", "leaked")
			a.edit("run.sh", "sh", "bash")
			// Something else changes the modes after the tools ran.
			chmod(t, filepath.Join(e.work, "secret.txt"), 0o644)
			chmod(t, filepath.Join(e.work, "run.sh"), 0o600)
		},
		want: "restored run.sh\nrestored secret.txt\n",
	}, {
		name:  "a mode change alone",
		files: map[string]string{"a.txt": "same"},
		run: func(t *testing.T, e env, a *agent) {
			a.write("a.txt", "same")
			chmod(t, filepath.Join(e.work, "a.txt"), 0o666)
		},
		want: "restored a.txt\n",
	}, {
		name:  "nested new directories",
		files: map[string]string{"keep/old.txt": "old"},
		run: func(t *testing.T, e env, a *agent) {
			a.write("a/b/c/deep.txt", "deep")
			a.write("a/b/other.txt", "other")
			a.write("keep/new/x.txt", "x")
		},
		want: "deleted keep/new/x.txt\ndeleted a/b/other.txt\ndeleted a/b/c/deep.txt\n",
	}, {
		name: "a directory the agent created that someone else filled stays",
		run: func(t *testing.T, e env, a *agent) {
			a.write("made/new.txt", "new")
			writeTree(t, filepath.Join(e.work, "made"), map[string]string{"user.txt": "mine"})
		},
		want: "deleted made/new.txt\n",
	}, {
		name:  "a link to a file inside: the link and the file are saved",
		files: map[string]string{"target.txt": "target\n"},
		prep:  func(t *testing.T, e env) { symlink(t, "target.txt", filepath.Join(e.work, "link.txt")) },
		run: func(t *testing.T, e env, a *agent) {
			a.write("link.txt", "through the link")
			a.write("target.txt", "directly")
		},
		want: "unchanged link.txt\nrestored target.txt\n",
	}, {
		name:  "a link through a linked directory",
		files: map[string]string{"real/inner/i.txt": "i", "real/t.txt": "t"},
		prep: func(t *testing.T, e env) {
			symlink(t, "real/inner", filepath.Join(e.work, "dirlink"))
			// The kernel resolves dirlink/.. to real, not to the work dir.
			symlink(t, "dirlink/../t.txt", filepath.Join(e.work, "up.txt"))
		},
		run: func(t *testing.T, e env, a *agent) {
			a.write("up.txt", "via up")
			a.write("dirlink/i.txt", "via dirlink")
		},
		want: "restored dirlink/i.txt\nunchanged up.txt\nrestored real/t.txt\n",
	}, {
		name: "a dangling link inside: the file it makes is deleted",
		prep: func(t *testing.T, e env) { symlink(t, "made.txt", filepath.Join(e.work, "dangling.txt")) },
		run:  func(t *testing.T, e env, a *agent) { a.write("dangling.txt", "made") },
		want: "unchanged dangling.txt\ndeleted made.txt\n",
	}, {
		name:  "a link replaced by a file",
		files: map[string]string{"target.txt": "target\n"},
		prep:  func(t *testing.T, e env) { symlink(t, "target.txt", filepath.Join(e.work, "link.txt")) },
		run: func(t *testing.T, e env, a *agent) {
			a.write("link.txt", "through")
			remove(t, filepath.Join(e.work, "link.txt"))
			writeTree(t, e.work, map[string]string{"link.txt": "a file now"})
		},
		force: true,
		want:  "restored link.txt (copied aside)\nrestored target.txt\n",
	}, {
		name:  "a file replaced by a link",
		files: map[string]string{"a.txt": "a", "b.txt": "b"},
		run: func(t *testing.T, e env, a *agent) {
			a.write("a.txt", "changed")
			remove(t, filepath.Join(e.work, "a.txt"))
			symlink(t, "b.txt", filepath.Join(e.work, "a.txt"))
		},
		force: true,
		want:  "restored a.txt (copied aside)\n",
	}, {
		name:  "a file deleted after it was saved",
		files: map[string]string{"dir/a.txt": "a"},
		run: func(t *testing.T, e env, a *agent) {
			a.edit("dir/a.txt", "a", "b")
			if err := os.RemoveAll(filepath.Join(e.work, "dir")); err != nil {
				t.Fatal(err)
			}
		},
		want: "restored dir/a.txt\n",
	}, {
		name:  "a call that failed changed nothing",
		files: map[string]string{"a.txt": "a"},
		run: func(t *testing.T, e env, a *agent) {
			a.call("edit_file?", map[string]any{"path": "a.txt", "old_string": "zzz", "new_string": "y"})
			a.call("edit_file?", map[string]any{"path": "missing.txt", "old_string": "zzz", "new_string": "y"})
		},
		want: "unchanged missing.txt\nunchanged a.txt\n",
	}, {
		name:  "absolute paths inside the work directory",
		files: map[string]string{"a.txt": "a"},
		run: func(t *testing.T, e env, a *agent) {
			a.write(filepath.Join(e.work, "a.txt"), "abs")
			a.write(filepath.Join(e.work, "sub", "b.txt"), "abs")
		},
		want: "deleted sub/b.txt\nrestored a.txt\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tt.files, nil)
			if tt.prep != nil {
				tt.prep(t, e)
			}
			before := tree(t, e.work)
			s := e.open(t)
			tt.run(t, e, e.agent(t, s))
			if tree(t, e.work) == before && !strings.Contains(tt.name, "failed") {
				t.Fatal("the session changed nothing; the test proves nothing")
			}
			var opts []rollback.RestoreOption
			if tt.force {
				opts = append(opts, rollback.Force())
			}
			if got := summary(e.restore(t, s, opts...)); got != tt.want {
				t.Errorf("restore reports:\n%s\nwant:\n%s", got, tt.want)
			}
			after := tree(t, e.work)
			if strings.Contains(tt.name, "someone else filled") {
				before += "\nmade dir -rwxr-xr-x\nmade/user.txt file -rw-r--r-- \"mine\""
			}
			if after != before {
				t.Errorf("after the restore the work directory is\n%s\nwant\n%s", after, before)
			}
			again := e.restore(t, nil)
			for _, r := range again {
				if r.Action != rollback.Unchanged {
					t.Errorf("second restore: %s %s %s; want unchanged", r.Action, r.Path, r.Err)
				}
			}
			if tree(t, e.work) != after {
				t.Error("the second restore changed the work directory")
			}
		})
	}
}

// TestNeverOutside attacks the restore: after the session, parts of the
// work directory are swapped for links that lead out of it. Nothing outside
// may be written or deleted; what cannot be restored inside is Failed. A
// plain restore keeps what changed since the session; the attacks are
// made against a forced one, which overwrites it.
func TestNeverOutside(t *testing.T) {
	t.Parallel()
	outside := map[string]string{"a.txt": "outside a", "new.txt": "outside new", "sub/a.txt": "outside sub/a", "sub/new.txt": "outside sub/new"}
	tests := []struct {
		name   string
		files  map[string]string
		run    func(t *testing.T, e env, a *agent)
		attack func(t *testing.T, e env)
		want   string // reports; "FAILED" lines checked by prefix
	}{{
		name:  "a directory swapped for a link out",
		files: map[string]string{"sub/a.txt": "inside"},
		run:   func(t *testing.T, e env, a *agent) { a.write("sub/a.txt", "changed") },
		attack: func(t *testing.T, e env) {
			must(t, os.RemoveAll(filepath.Join(e.work, "sub")))
			symlink(t, filepath.Join(e.outside, "sub"), filepath.Join(e.work, "sub"))
		},
		want: "failed sub/a.txt: it leads outside the work directory through a symbolic link",
	}, {
		name:  "a directory swapped for a relative link out",
		files: map[string]string{"sub/a.txt": "inside"},
		run:   func(t *testing.T, e env, a *agent) { a.write("sub/a.txt", "changed") },
		attack: func(t *testing.T, e env) {
			must(t, os.RemoveAll(filepath.Join(e.work, "sub")))
			symlink(t, "../outside/sub", filepath.Join(e.work, "sub"))
		},
		want: "failed sub/a.txt: it leads outside the work directory through a symbolic link",
	}, {
		name:  "a file swapped for a link out: the link is replaced, not followed",
		files: map[string]string{"a.txt": "inside"},
		run:   func(t *testing.T, e env, a *agent) { a.write("a.txt", "changed") },
		attack: func(t *testing.T, e env) {
			remove(t, filepath.Join(e.work, "a.txt"))
			symlink(t, filepath.Join(e.outside, "a.txt"), filepath.Join(e.work, "a.txt"))
		},
		want: "restored a.txt (copied aside)\n",
	}, {
		name: "a created file swapped for a link out: the link is deleted",
		run:  func(t *testing.T, e env, a *agent) { a.write("new.txt", "mine") },
		attack: func(t *testing.T, e env) {
			remove(t, filepath.Join(e.work, "new.txt"))
			symlink(t, filepath.Join(e.outside, "new.txt"), filepath.Join(e.work, "new.txt"))
		},
		want: "deleted new.txt (copied aside)\n",
	}, {
		name: "the directory of a created file swapped for a link out",
		run:  func(t *testing.T, e env, a *agent) { a.write("sub/new.txt", "mine") },
		attack: func(t *testing.T, e env) {
			must(t, os.RemoveAll(filepath.Join(e.work, "sub")))
			symlink(t, filepath.Join(e.outside, "sub"), filepath.Join(e.work, "sub"))
		},
		want: "failed sub/new.txt: it leads outside the work directory through a symbolic link",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tt.files, outside)
			out := tree(t, e.outside)
			s := e.open(t)
			tt.run(t, e, e.agent(t, s))
			tt.attack(t, e)
			got := summary(e.restore(t, s, rollback.Force()))
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("restore reports:\n%s\nwant:\n%s", got, tt.want)
			}
			if tree(t, e.outside) != out {
				t.Errorf("the restore changed the directory outside:\n%s\nwas\n%s", tree(t, e.outside), out)
			}
			if strings.HasPrefix(got, "restored a.txt") {
				if data, err := os.ReadFile(filepath.Join(e.work, "a.txt")); err != nil || string(data) != "inside" {
					t.Errorf("a.txt = %q, %v; want the regular file back", data, err)
				}
			}
		})
	}
}

// TestSnapshotOutside: the store never reads outside the work directory to
// save a file, and a link out is saved as a link only.
func TestSnapshotOutside(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, map[string]string{"secret.txt": "outside secret", "dir/f.txt": "f"})
	symlink(t, filepath.Join(e.outside, "secret.txt"), filepath.Join(e.work, "abs-link"))
	symlink(t, "../outside/secret.txt", filepath.Join(e.work, "rel-link"))
	symlink(t, "../outside/dir", filepath.Join(e.work, "dir-link"))
	s := e.open(t)
	for _, p := range []string{"abs-link", "rel-link"} {
		if _, err := s.Snapshot(p); err != nil {
			t.Errorf("Snapshot(%s): %v; a link is saved as a link", p, err)
		}
	}
	if _, err := s.Snapshot("dir-link/f.txt"); !errors.Is(err, rollback.ErrOutside) {
		t.Errorf("Snapshot(dir-link/f.txt): %v, want ErrOutside", err)
	}
	must(t, s.Close())
	j, err := rollback.Load(e.state, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Entries) != 2 || j.Entries[0].Kind != rollback.KindSymlink || j.Entries[1].Kind != rollback.KindSymlink {
		t.Fatalf("entries %+v; want the two links, as links", j.Entries)
	}
	blobs, _ := os.ReadDir(filepath.Join(e.state, sessionID, "blobs"))
	if len(blobs) != 0 {
		t.Errorf("%d blobs saved; nothing outside may be copied", len(blobs))
	}
}

func chmod(t testing.TB, p string, m os.FileMode) {
	t.Helper()
	must(t, os.Chmod(p, m))
}

func remove(t testing.TB, p string) {
	t.Helper()
	must(t, os.Remove(p))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
