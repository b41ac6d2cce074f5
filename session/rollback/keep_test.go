package rollback_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/session/rollback"
)

// TestRollbackKeepsLaterEdits: a path that changed after the session left
// it — edited, filled, re-created, made a directory — is kept, by Plan as
// by Restore, and reported with the reason; Force restores it after
// copying what is there into the store. Nothing the user made is lost.
func TestRollbackKeepsLaterEdits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		run   func(t *testing.T, e env, a *agent)
		later func(t *testing.T, e env) // after the session, before the rollback
		want  string                    // the reports of a plain restore (and plan)
		kept  map[string]string         // path → content still there after it
		force string                    // the reports of a forced restore after it
		copy  map[string]string         // path → content of the copy a restore made
	}{{
		name:  "a file the agent changed, edited after",
		files: map[string]string{"notes.txt": "mine\n"},
		run:   func(t *testing.T, e env, a *agent) { a.write("notes.txt", "agent's\n") },
		later: func(t *testing.T, e env) {
			writeTree(t, e.work, map[string]string{"notes.txt": "agent's\nand my later line\n"})
		},
		want:  "kept notes.txt: changed since the session wrote it\n",
		kept:  map[string]string{"notes.txt": "agent's\nand my later line\n"},
		force: "restored notes.txt (copied aside)\n",
		copy:  map[string]string{"notes.txt": "agent's\nand my later line\n"},
	}, {
		name:  "a file the agent created, filled after",
		run:   func(t *testing.T, e env, a *agent) { a.write("new/draft.txt", "") },
		later: func(t *testing.T, e env) { writeTree(t, e.work, map[string]string{"new/draft.txt": "my draft"}) },
		want:  "kept new/draft.txt: changed since the session wrote it\n",
		kept:  map[string]string{"new/draft.txt": "my draft"},
		force: "deleted new/draft.txt (copied aside)\n",
		copy:  map[string]string{"new/draft.txt": "my draft"},
	}, {
		name:  "a file the agent edited twice, edited after",
		files: map[string]string{"a.txt": "one"},
		run: func(t *testing.T, e env, a *agent) {
			a.write("a.txt", "two")
			a.edit("a.txt", "two", "three")
		},
		later: func(t *testing.T, e env) { writeTree(t, e.work, map[string]string{"a.txt": "two"}) }, // the agent's first version is not its last
		want:  "kept a.txt: changed since the session wrote it\n",
		kept:  map[string]string{"a.txt": "two"},
		force: "restored a.txt (copied aside)\n",
		copy:  map[string]string{"a.txt": "two"},
	}, {
		name:  "a file the agent deleted, re-created after",
		files: map[string]string{"old.txt": "old"},
		run: func(t *testing.T, e env, a *agent) {
			_, err := a.store.Snapshot("old.txt")
			must(t, err)
			remove(t, filepath.Join(e.work, "old.txt")) // as a deleting tool would
			must(t, a.store.Settle("old.txt"))
		},
		later: func(t *testing.T, e env) { writeTree(t, e.work, map[string]string{"old.txt": "new and mine"}) },
		want:  "kept old.txt: changed since the session wrote it\n",
		kept:  map[string]string{"old.txt": "new and mine"},
		force: "restored old.txt (copied aside)\n",
		copy:  map[string]string{"old.txt": "new and mine"},
	}, {
		name:  "a file made a directory after",
		files: map[string]string{"a.txt": "a"},
		run:   func(t *testing.T, e env, a *agent) { a.write("a.txt", "agent") },
		later: func(t *testing.T, e env) {
			remove(t, filepath.Join(e.work, "a.txt"))
			writeTree(t, e.work, map[string]string{"a.txt/inside.txt": "mine"})
		},
		want:  "kept a.txt: it is a directory now; rein does not remove or replace directories\n",
		kept:  map[string]string{"a.txt/inside.txt": "mine"},
		force: "kept a.txt: it is a directory now; rein does not remove or replace directories\n",
	}, {
		name:  "a link the agent wrote through, its file edited after",
		files: map[string]string{"target.txt": "target"},
		run: func(t *testing.T, e env, a *agent) {
			symlink(t, "target.txt", filepath.Join(e.work, "link.txt"))
			a.write("link.txt", "through")
		},
		later: func(t *testing.T, e env) { writeTree(t, e.work, map[string]string{"target.txt": "through, and mine"}) },
		want:  "unchanged link.txt\nkept target.txt: changed since the session wrote it\n",
		kept:  map[string]string{"target.txt": "through, and mine"},
		force: "unchanged link.txt\nrestored target.txt (copied aside)\n",
		copy:  map[string]string{"target.txt": "through, and mine"},
	}, {
		name:  "only the edited one of two is kept",
		files: map[string]string{"a.txt": "a", "b.txt": "b"},
		run: func(t *testing.T, e env, a *agent) {
			a.write("a.txt", "agent a")
			a.write("b.txt", "agent b")
			a.write("c.txt", "agent c")
		},
		later: func(t *testing.T, e env) { writeTree(t, e.work, map[string]string{"b.txt": "mine"}) },
		want:  "deleted c.txt\nkept b.txt: changed since the session wrote it\nrestored a.txt\n",
		kept:  map[string]string{"b.txt": "mine", "a.txt": "a"},
		force: "unchanged c.txt\nrestored b.txt (copied aside)\nunchanged a.txt\n",
		copy:  map[string]string{"b.txt": "mine"},
	}, {
		name:  "what the agent left, deleted after: nothing to lose, restored",
		files: map[string]string{"a.txt": "a"},
		run:   func(t *testing.T, e env, a *agent) { a.write("a.txt", "agent") },
		later: func(t *testing.T, e env) { remove(t, filepath.Join(e.work, "a.txt")) },
		want:  "restored a.txt\n",
		kept:  map[string]string{"a.txt": "a"},
		force: "unchanged a.txt\n",
	}, {
		name:  "a mode changed after: not an edit, restored",
		files: map[string]string{"a.txt": "a"},
		run:   func(t *testing.T, e env, a *agent) { a.write("a.txt", "agent") },
		later: func(t *testing.T, e env) { chmod(t, filepath.Join(e.work, "a.txt"), 0o600) },
		want:  "restored a.txt\n",
		kept:  map[string]string{"a.txt": "a"},
		force: "unchanged a.txt\n",
	}, {
		name:  "rein killed before the tool changed it",
		files: map[string]string{"a.txt": "a"},
		run: func(t *testing.T, e env, a *agent) {
			_, err := a.store.Snapshot("a.txt") // and then nothing: killed
			must(t, err)
		},
		later: func(t *testing.T, e env) {},
		want:  "unchanged a.txt\n",
		kept:  map[string]string{"a.txt": "a"},
		force: "unchanged a.txt\n",
	}, {
		name:  "rein killed after the tool changed it: restored, and a copy kept",
		files: map[string]string{"a.txt": "a"},
		run: func(t *testing.T, e env, a *agent) {
			_, err := a.store.Snapshot("a.txt")
			must(t, err)
			writeTree(t, e.work, map[string]string{"a.txt": "the agent's, unrecorded"}) // killed before Settle
		},
		later: func(t *testing.T, e env) {},
		want:  "restored a.txt (copied aside)\n",
		kept:  map[string]string{"a.txt": "a"},
		force: "unchanged a.txt\n",
		copy:  map[string]string{"a.txt": "the agent's, unrecorded"},
	}, {
		name:  "rein killed during a second call, before it changed the file",
		files: map[string]string{"a.txt": "a"},
		run: func(t *testing.T, e env, a *agent) {
			a.write("a.txt", "first")
			_, err := a.store.Snapshot("a.txt") // the second call's mark; then killed
			must(t, err)
		},
		later: func(t *testing.T, e env) {},
		want:  "restored a.txt\n",
		kept:  map[string]string{"a.txt": "a"},
		force: "unchanged a.txt\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tt.files, nil)
			s := e.open(t)
			tt.run(t, e, e.agent(t, s))
			must(t, s.Close())
			tt.later(t, e)
			before := tree(t, e.work)
			j, err := rollback.Load(e.state, sessionID)
			must(t, err)
			plan, err := j.Plan()
			must(t, err)
			if got := summary(plan); got != tt.want {
				t.Errorf("Plan:\n%s\nwant:\n%s", got, tt.want)
			}
			if tree(t, e.work) != before {
				t.Fatal("Plan changed the work directory")
			}
			plain := e.restore(t, nil)
			if got := summary(plain); got != tt.want {
				t.Errorf("Restore:\n%s\nwant:\n%s", got, tt.want)
			}
			for p, want := range tt.kept {
				if data, err := os.ReadFile(filepath.Join(e.work, p)); err != nil || string(data) != want {
					t.Errorf("%s after the restore: %q, %v; want %q", p, data, err, want)
				}
			}
			reports := e.restore(t, nil, rollback.Force())
			if got := summary(reports); got != tt.force {
				t.Errorf("forced Restore:\n%s\nwant:\n%s", got, tt.force)
			}
			for _, r := range append(plain, reports...) {
				if r.Copy == "" {
					continue
				}
				want, ok := tt.copy[r.Path]
				if !ok {
					t.Errorf("a copy of %s at %s; want none", r.Path, r.Copy)
					continue
				}
				if !strings.HasPrefix(r.Copy, filepath.Join(e.state, sessionID, "replaced")+string(filepath.Separator)) {
					t.Errorf("the copy of %s is at %s; want it in the store", r.Path, r.Copy)
				}
				if data, err := os.ReadFile(r.Copy); err != nil || string(data) != want {
					t.Errorf("the copy of %s: %q, %v; want %q", r.Path, data, err, want)
				}
				delete(tt.copy, r.Path)
			}
			if len(tt.copy) > 0 {
				t.Errorf("no copy of %v", tt.copy)
			}
		})
	}
}

// TestOldStoreKept: a store from a rein that did not record what the agent
// left (manifest version 1) cannot tell a later edit from the agent's
// work: every changed path is kept, with the reason, until Force.
func TestOldStoreKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a", "b.txt": "b"}, nil)
	s := e.open(t)
	a := e.agent(t, s)
	a.write("a.txt", "agent")
	a.write("c.txt", "agent")
	must(t, s.Close())
	// What an older rein wrote: the snapshot lines only, version 1.
	data, err := os.ReadFile(e.journal())
	must(t, err)
	var old []string
	for l := range strings.Lines(string(data)) {
		if !strings.Contains(l, `"kind":"left"`) && !strings.Contains(l, `"kind":"changing"`) {
			old = append(old, l)
		}
	}
	must(t, os.WriteFile(e.journal(), []byte(strings.Join(old, "")), 0o600))
	m := filepath.Join(e.state, sessionID, "manifest.json")
	data, err = os.ReadFile(m)
	must(t, err)
	must(t, os.WriteFile(m, []byte(strings.Replace(string(data), `"version":2`, `"version":1`, 1)), 0o600))

	why := "rein cannot tell whether it changed since the session: an older rein saved it without recording what the agent left"
	if got, want := summary(e.restore(t, nil)), "kept c.txt: "+why+"\nkept a.txt: "+why+"\n"; got != want {
		t.Errorf("Restore of a version 1 store:\n%s\nwant:\n%s", got, want)
	}
	if got, want := summary(e.restore(t, nil, rollback.Force())), "deleted c.txt (copied aside)\nrestored a.txt (copied aside)\n"; got != want {
		t.Errorf("forced Restore of a version 1 store:\n%s\nwant:\n%s", got, want)
	}
	if got := tree(t, e.work); !strings.Contains(got, `a.txt file -rw-r--r-- "a"`) || strings.Contains(got, "c.txt") {
		t.Errorf("after the forced restore:\n%s", got)
	}
}
