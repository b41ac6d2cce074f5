package fs_test

import (
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reinhq/rein/tool"
	fstool "github.com/reinhq/rein/tool/fs"
)

func TestChanges(t *testing.T) {
	t.Parallel()
	root, dir := workspace(t, map[string]string{"a.txt": "a\n"})
	changers := map[string]tool.Changer{}
	for _, tl := range fstool.Tools(root, fstool.Options{}) {
		if c, ok := tl.(tool.Changer); ok {
			changers[tl.Spec().Name] = c
		}
	}
	if names := slices.Sorted(maps.Keys(changers)); !slices.Equal(names, []string{"edit_file", "write_file"}) {
		t.Fatalf("tools that declare changes: %q, want edit_file and write_file (read_file, glob and grep change nothing)", names)
	}
	tests := []struct {
		path    string
		want    string
		wantErr error // nil: want no error; tool.ErrArgs etc.
	}{
		{path: "a.txt", want: "a.txt"},
		{path: "./b/../new/c.txt", want: filepath.Join("new", "c.txt")},
		{path: "deep/dir/", want: filepath.Join("deep", "dir")},
		{path: filepath.Join(dir, "abs.txt"), want: "abs.txt"},
		{path: "../escape.txt", wantErr: fstool.ErrOutside},
		{path: "a/../../escape.txt", wantErr: fstool.ErrOutside},
		{path: "/etc/passwd", wantErr: fstool.ErrOutside},
		{path: "~/.bashrc", wantErr: fstool.ErrOutside},
		{path: "nul\x00.txt", wantErr: fstool.ErrOutside},
		{path: dir, wantErr: errAny},
		{path: ".", wantErr: errAny},
		{path: "", wantErr: errAny},
	}
	for name, c := range changers {
		for _, tt := range tests {
			args := map[string]any{"path": tt.path, "content": "x"}
			if name == "edit_file" {
				args = map[string]any{"path": tt.path, "old_string": "a", "new_string": "b"}
			}
			raw, err := json.Marshal(args)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Changes(raw)
			switch {
			case tt.wantErr == nil && (err != nil || !slices.Equal(got, []string{tt.want})):
				t.Errorf("%s Changes(%q) = %q, %v; want [%q]", name, tt.path, got, err, tt.want)
			case tt.wantErr == errAny && err == nil:
				t.Errorf("%s Changes(%q) = %q; want an error", name, tt.path, got)
			case tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Errorf("%s Changes(%q) = %q, %v; want %v", name, tt.path, got, err, tt.wantErr)
			}
		}
		for _, bad := range []string{`not json`, `[]`, `{"path": 7}`} {
			if got, err := c.Changes(json.RawMessage(bad)); !errors.Is(err, tool.ErrArgs) {
				t.Errorf("%s Changes(%s) = %q, %v; want tool.ErrArgs", name, bad, got, err)
			}
		}
	}
	// Changes changes nothing: the paths it named were not created.
	for _, p := range []string{"new", "deep", "abs.txt"} {
		if _, err := root.Lstat(p); err == nil {
			t.Errorf("Changes created %s", p)
		}
	}
}

// errAny stands for "some error" in a table.
var errAny = errors.New("any error")

func TestChangesWithoutRoot(t *testing.T) {
	t.Parallel()
	w := fstool.WriteFile(nil, fstool.Options{})
	if _, err := w.Changes(json.RawMessage(`{"path":"a.txt","content":""}`)); !errors.Is(err, fstool.ErrNoRoot) {
		t.Errorf("Changes without a work directory: %v, want ErrNoRoot", err)
	}
}
