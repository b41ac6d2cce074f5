package fs_test

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/tool"
	fstool "github.com/reinhq/rein/tool/fs"
)

func globTree(t *testing.T) (*os.Root, string) {
	t.Helper()
	root, dir := workspace(t, map[string]string{
		"main.go":             "package main\n",
		"README.md":           "# readme\n",
		"cmd/app/app.go":      "package app\n",
		"cmd/app/app_test.go": "package app\n",
		"internal/x/x.go":     "package x\n",
		"internal/x/y.txt":    "y\n",
		"docs/a.md":           "a\n",
		"docs/deep/b.md":      "b\n",
		".git/HEAD":           "ref: refs/heads/main\n",
		".git/x.go":           "package git\n",
		".hidden/h.go":        "package h\n",
		"we*ird/[x].go":       "package weird\n",
	})
	outside := filepath.Join(filepath.Dir(dir), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.go"), []byte("CANARY"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, outside, filepath.Join(dir, "out"))
	symlink(t, "internal", filepath.Join(dir, "in-link"))
	return root, dir
}

func TestGlob(t *testing.T) {
	t.Parallel()
	root, _ := globTree(t)
	g := fstool.Glob(root, fstool.Options{})
	tests := []struct {
		args fstool.GlobArgs
		want []string
	}{
		{fstool.GlobArgs{Pattern: "*.go"}, []string{"main.go"}},
		{fstool.GlobArgs{Pattern: "**/*.go"}, []string{".hidden/h.go", "cmd/app/app.go", "cmd/app/app_test.go", "internal/x/x.go", "main.go", `we*ird/[x].go`}},
		{fstool.GlobArgs{Pattern: "**/*_test.go"}, []string{"cmd/app/app_test.go"}},
		{fstool.GlobArgs{Pattern: "cmd/**"}, []string{"cmd/", "cmd/app/", "cmd/app/app.go", "cmd/app/app_test.go"}},
		{fstool.GlobArgs{Pattern: "docs/**/*.md"}, []string{"docs/a.md", "docs/deep/b.md"}},
		{fstool.GlobArgs{Pattern: "docs/*/"}, []string{"docs/deep/"}},
		{fstool.GlobArgs{Pattern: "./docs/a.md"}, []string{"docs/a.md"}},
		{fstool.GlobArgs{Pattern: "*", Path: "docs"}, []string{"docs/a.md", "docs/deep/"}},
		{fstool.GlobArgs{Pattern: "**/*.md", Path: "./docs/"}, []string{"docs/a.md", "docs/deep/b.md"}},
		{fstool.GlobArgs{Pattern: "*/*.go", Path: "in-link"}, []string{"in-link/x/x.go"}},
		{fstool.GlobArgs{Pattern: ".git/*"}, []string{".git/HEAD", ".git/x.go"}},
		{fstool.GlobArgs{Pattern: `we\*ird/\[x\].go`}, []string{`we*ird/[x].go`}},
		{fstool.GlobArgs{Pattern: "o*"}, []string{"out"}}, // the link is listed, not followed
		{fstool.GlobArgs{Pattern: "**/secret.go"}, nil},   // nor walked into
		{fstool.GlobArgs{Pattern: "*.rs"}, nil},
		{fstool.GlobArgs{Pattern: "nothere/*.go"}, nil},
	}
	for _, tt := range tests {
		got, err := call(t, g, tt.args)
		if err != nil {
			t.Errorf("glob %+v: %v", tt.args, err)
			continue
		}
		want := strings.Join(tt.want, "\n")
		if tt.want == nil {
			if !strings.HasPrefix(got, "no paths match") {
				t.Errorf("glob %+v = %q, want no paths", tt.args, got)
			}
			continue
		}
		if got != want {
			t.Errorf("glob %+v =\n%s\nwant\n%s", tt.args, got, want)
		}
	}
}

func TestGlobCap(t *testing.T) {
	t.Parallel()
	root, _ := globTree(t)
	got, err := call(t, fstool.Glob(root, fstool.Options{MaxResults: 2}), fstool.GlobArgs{Pattern: "**/*.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := ".hidden/h.go\ncmd/app/app.go\n[first 2 of 6 paths; narrow the pattern or the path to see the rest]"
	if got != want {
		t.Errorf("capped glob =\n%s\nwant\n%s", got, want)
	}
}

func TestGlobErrors(t *testing.T) {
	t.Parallel()
	root, dir := globTree(t)
	g := fstool.Glob(root, fstool.Options{})
	tests := []struct {
		args fstool.GlobArgs
		want error
		text string
	}{
		{fstool.GlobArgs{Pattern: "/etc/*"}, tool.ErrArgs, "pattern"},
		{fstool.GlobArgs{Pattern: "../*"}, tool.ErrArgs, "contains \"..\""},
		{fstool.GlobArgs{Pattern: "docs/../../*"}, tool.ErrArgs, "contains \"..\""},
		{fstool.GlobArgs{Pattern: "~/*"}, tool.ErrArgs, "home"},
		{fstool.GlobArgs{Pattern: "[x"}, tool.ErrArgs, "not a valid pattern"},
		{fstool.GlobArgs{Pattern: "."}, tool.ErrArgs, "matches nothing"},
		{fstool.GlobArgs{Pattern: "*", Path: "main.go"}, nil, "is a file"},
		{fstool.GlobArgs{Pattern: "*", Path: "nothere"}, tool.ErrNotExist, "does not exist"},
		{fstool.GlobArgs{Pattern: "*", Path: ".."}, fstool.ErrOutside, "climbs out"},
		{fstool.GlobArgs{Pattern: "*", Path: "/etc"}, fstool.ErrOutside, "outside"},
		{fstool.GlobArgs{Pattern: "*", Path: "out"}, fstool.ErrOutside, "symbolic link"},
		{fstool.GlobArgs{Pattern: "out/*"}, fstool.ErrOutside, "symbolic link"},
		{fstool.GlobArgs{Pattern: "*", Path: filepath.Join(dir, "out")}, fstool.ErrOutside, "symbolic link"},
	}
	for _, tt := range tests {
		got, err := call(t, g, tt.args)
		switch {
		case err == nil:
			t.Errorf("glob %+v = %q, want an error", tt.args, got)
		case tt.want != nil && !errors.Is(err, tt.want):
			t.Errorf("glob %+v: %v, want errors.Is %v", tt.args, err, tt.want)
		case !strings.Contains(err.Error(), tt.text):
			t.Errorf("glob %+v: %q, want it to mention %q", tt.args, err, tt.text)
		}
	}
}

// FuzzGlobMatch checks the glob matcher against path.Match, which it must
// agree with on patterns without "**", and that it never panics.
func FuzzGlobMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"*.go", "a.go"}, {"a/*/c", "a/b/c"}, {"**/x", "a/b/x"}, {"[a-c]?", "bz"},
		{`\*`, "*"}, {"a/**/b/**/c", "a/x/b/y/z/c"}, {"**", "a"}, {"[", "a"}, {"*/*", "a"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		got, ok := fstool.MatchForTest(pattern, name) // must not panic
		if !ok || strings.Contains(pattern, "**") || !plain(pattern) || !plain(name) {
			return
		}
		want, err := path.Match(pattern, name)
		if err != nil {
			return
		}
		if got != want {
			t.Errorf("glob %q on %q = %v, path.Match says %v", pattern, name, got, want)
		}
	})
}

// plain reports whether p has no empty, "." or ".." segment, the forms the
// glob tool cleans away and path.Match does not.
func plain(p string) bool {
	for s := range strings.SplitSeq(p, "/") {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	return true
}
