package rollback_test

import (
	"encoding/json"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/session/rollback"
	"github.com/reinhq/rein/tool"
	fstool "github.com/reinhq/rein/tool/fs"
)

// sessionID is the session every test store belongs to.
const sessionID = "20260101T000000Z-test"

// env is one test's world: a work directory, a directory outside it that
// nothing may touch, and a state directory for the stores.
type env struct {
	work, outside, state string
}

// newEnv makes an env whose work directory holds files (path → content;
// parents created) and whose outside directory holds outside.
func newEnv(t testing.TB, files, outside map[string]string) env {
	t.Helper()
	base := t.TempDir()
	e := env{work: filepath.Join(base, "work"), outside: filepath.Join(base, "outside"), state: filepath.Join(base, "state")}
	writeTree(t, e.work, files)
	writeTree(t, e.outside, outside)
	return e
}

func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// open opens the env's store, closed when the test ends.
func (e env) open(t testing.TB, opts ...rollback.Option) *rollback.Store {
	t.Helper()
	s, err := rollback.Open(e.state, sessionID, e.work, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// agent plays the loop: for each call, it asks the tool which files the
// call changes, snapshots them, then runs the tool.
type agent struct {
	t     testing.TB
	store *rollback.Store
	tools map[string]tool.Tool
}

func (e env) agent(t testing.TB, s *rollback.Store) *agent {
	t.Helper()
	root, err := os.OpenRoot(e.work)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	a := &agent{t: t, store: s, tools: map[string]tool.Tool{}}
	for _, tl := range fstool.Tools(root, fstool.Options{}) {
		a.tools[tl.Spec().Name] = tl
	}
	return a
}

// call runs one tool call and returns the snapshot ids it took, then
// records what it left (Settle). A tool error fails the test unless the
// name ends in "?".
func (a *agent) call(name string, args map[string]any) []string {
	a.t.Helper()
	mayFail := strings.HasSuffix(name, "?")
	name = strings.TrimSuffix(name, "?")
	raw, err := json.Marshal(args)
	if err != nil {
		a.t.Fatal(err)
	}
	tl := a.tools[name]
	paths, err := tl.(tool.Changer).Changes(raw)
	if err != nil {
		a.t.Fatalf("%s%s: Changes: %v", name, raw, err)
	}
	var ids []string
	for _, p := range paths {
		id, err := a.store.Snapshot(p)
		if err != nil {
			a.t.Fatalf("%s%s: Snapshot(%q): %v", name, raw, p, err)
		}
		ids = append(ids, id)
	}
	_, runErr := tl.Run(a.t.Context(), raw)
	if err := a.store.Settle(paths...); err != nil {
		a.t.Fatalf("%s%s: Settle: %v", name, raw, err)
	}
	if runErr != nil && !mayFail {
		a.t.Fatalf("%s%s: %v", name, raw, runErr)
	}
	return ids
}

func (a *agent) write(path, content string) []string {
	a.t.Helper()
	return a.call("write_file", map[string]any{"path": path, "content": content})
}

func (a *agent) edit(path, old, new string) []string {
	a.t.Helper()
	return a.call("edit_file", map[string]any{"path": path, "old_string": old, "new_string": new})
}

// tree describes everything under dir, one line per entry: its kind, mode
// and content or target, so two states can be compared whole.
func tree(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&iofs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, fmt.Sprintf("%s link -> %s", rel, target))
		case info.IsDir():
			lines = append(lines, fmt.Sprintf("%s dir %v", rel, info.Mode().Perm()))
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s file %v %q", rel, info.Mode(), data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// summary renders reports as `rein rollback` prints them, one per line.
func summary(reports []rollback.FileReport) string {
	var b strings.Builder
	for _, r := range reports {
		fmt.Fprintf(&b, "%s %s", r.Action, filepath.ToSlash(r.Path))
		if r.Err != "" {
			fmt.Fprintf(&b, ": %s", r.Err)
		}
		if r.Action == rollback.Kept {
			fmt.Fprintf(&b, ": %s", r.Reason)
		}
		if r.Copy != "" {
			b.WriteString(" (copied aside)")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// restore closes s and restores the session, failing the test on an error.
func (e env) restore(t testing.TB, s *rollback.Store, opts ...rollback.RestoreOption) []rollback.FileReport {
	t.Helper()
	if s != nil {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	reports, err := rollback.Restore(e.state, sessionID, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return reports
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
