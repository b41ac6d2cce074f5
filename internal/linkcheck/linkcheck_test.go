package linkcheck_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/linkcheck"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, dir, name string)
		ok     bool
	}{
		{name: "untouched", change: func(*testing.T, string, string) {}, ok: true},
		{name: "renamed within the directory and back", change: func(t *testing.T, dir, name string) {
			must(t, os.Rename(name, name+".x"))
			must(t, os.Rename(name+".x", name))
		}, ok: true},
		{name: "a second link added", change: func(t *testing.T, dir, name string) { must(t, os.Link(name, name+".2")) }, ok: true},
		{name: "deleted", change: func(t *testing.T, dir, name string) { must(t, os.Remove(name)) }},
		{name: "its directory deleted", change: func(t *testing.T, dir, name string) { must(t, os.RemoveAll(dir)) }},
		{name: "renamed away and replaced", change: func(t *testing.T, dir, name string) {
			must(t, os.Rename(name, name+".old"))
			must(t, os.WriteFile(name, []byte("another\n"), 0o600))
		}},
		{name: "its directory renamed away and replaced", change: func(t *testing.T, dir, name string) {
			must(t, os.Rename(dir, dir+".old"))
			must(t, os.MkdirAll(dir, 0o700))
			must(t, os.WriteFile(name, []byte("another\n"), 0o600))
		}},
		{name: "deleted, with another link left elsewhere", change: func(t *testing.T, dir, name string) {
			must(t, os.Link(name, filepath.Join(filepath.Dir(dir), "kept")))
			must(t, os.Remove(name))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "state")
			must(t, os.MkdirAll(dir, 0o700))
			name := filepath.Join(dir, "log.jsonl")
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			must(t, err)
			defer f.Close()
			must(t, linkcheck.Check(f, name))
			tt.change(t, dir, name)
			err = linkcheck.Check(f, name)
			if tt.ok && err != nil {
				t.Errorf("Check: %v; want nil", err)
			}
			if !tt.ok && !errors.Is(err, linkcheck.ErrUnlinked) {
				t.Errorf("Check: %v; want ErrUnlinked", err)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
