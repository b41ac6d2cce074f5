package fs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/tool"
	fstool "github.com/reinhq/rein/tool/fs"
)

func grepTree(t *testing.T) (*os.Root, string) {
	t.Helper()
	root, dir := workspace(t, map[string]string{
		"main.go":           "package main\n\nfunc main() {\n\trun()\n}\n",
		"run.go":            "package main\r\n\r\nfunc run() {}\r\n",
		"docs/notes.md":     "call run() first\nthen main\n",
		"docs/deep/x.go":    "package deep\nfunc run() {}\n",
		"bin/tool":          "run\x00\x01\x02",
		".git/config":       "func run() in git\n",
		"long.txt":          strings.Repeat("é", 400) + " func run()\n",
		"invalid-utf8.txt":  "func run() caf\xe9\n",
		"testdata/a_test.x": "func run()\n",
	})
	outside := filepath.Join(filepath.Dir(dir), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.go"), []byte("func run() CANARY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, outside, filepath.Join(dir, "out"))
	symlink(t, filepath.Join(outside, "secret.go"), filepath.Join(dir, "secret.go"))
	symlink(t, "main.go", filepath.Join(dir, "alias.go"))
	return root, dir
}

func TestGrep(t *testing.T) {
	t.Parallel()
	root, _ := grepTree(t)
	g := fstool.Grep(root, fstool.Options{})
	tests := []struct {
		args fstool.GrepArgs
		want string
	}{
		{fstool.GrepArgs{Pattern: `^func \w+\(`, Include: "*.go"},
			"docs/deep/x.go:2: func run() {}\nmain.go:3: func main() {\nrun.go:3: func run() {}"},
		{fstool.GrepArgs{Pattern: `run\(\)`, Path: "docs"},
			"docs/deep/x.go:2: func run() {}\ndocs/notes.md:1: call run() first"},
		{fstool.GrepArgs{Pattern: `main`, Path: "docs/notes.md"}, "docs/notes.md:2: then main"},
		{fstool.GrepArgs{Pattern: `main`, Path: "./docs/../docs/notes.md"}, "docs/notes.md:2: then main"},
		{fstool.GrepArgs{Pattern: `main`, Path: "alias.go"}, "alias.go:1: package main\nalias.go:3: func main() {"}, // a link named directly is followed (inside)
		{fstool.GrepArgs{Pattern: `run`, Include: "**/testdata/*"}, "testdata/a_test.x:1: func run()"},
		{fstool.GrepArgs{Pattern: `caf`, Include: "*.txt"}, "invalid-utf8.txt:1: func run() caf\uFFFD"},
		{fstool.GrepArgs{Pattern: `CANARY`}, `no matches for "CANARY" in .; 1 binary or oversized files skipped`},
		{fstool.GrepArgs{Pattern: `nothing here`, Include: "*.md"}, `no matches for "nothing here" in . (files matching "*.md")`},
	}
	for _, tt := range tests {
		got, err := call(t, g, tt.args)
		if err != nil {
			t.Errorf("grep %+v: %v", tt.args, err)
			continue
		}
		if got != tt.want {
			t.Errorf("grep %+v =\n%s\nwant\n%s", tt.args, got, tt.want)
		}
	}
}

func TestGrepLongLineAndCap(t *testing.T) {
	t.Parallel()
	root, _ := grepTree(t)
	got, err := call(t, fstool.Grep(root, fstool.Options{}), fstool.GrepArgs{Pattern: "run", Path: "long.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got, " […cut]") || len(got) > 600 || strings.Contains(got, "\uFFFD") {
		t.Errorf("long line = %q, want it cut on a character boundary", got)
	}
	got, err = call(t, fstool.Grep(root, fstool.Options{MaxResults: 2}), fstool.GrepArgs{Pattern: "run", Include: "*.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := "docs/deep/x.go:2: func run() {}\nmain.go:4: \trun()\n[stopped at 2 matches; narrow the pattern, the path or include to see the rest]"
	if got != want {
		t.Errorf("capped grep =\n%s\nwant\n%s", got, want)
	}
}

func TestGrepErrors(t *testing.T) {
	t.Parallel()
	root, dir := grepTree(t)
	g := fstool.Grep(root, fstool.Options{})
	tests := []struct {
		args fstool.GrepArgs
		want error
		text string
	}{
		{fstool.GrepArgs{Pattern: `(?<=x)y`}, tool.ErrArgs, "RE2"},
		{fstool.GrepArgs{Pattern: `(`}, tool.ErrArgs, "RE2"},
		{fstool.GrepArgs{Pattern: `x`, Include: "../*"}, tool.ErrArgs, "contains \"..\""},
		{fstool.GrepArgs{Pattern: `x`, Include: "/etc/*"}, tool.ErrArgs, "include"},
		{fstool.GrepArgs{Pattern: `x`, Path: "nothere"}, tool.ErrNotExist, "does not exist"},
		{fstool.GrepArgs{Pattern: `run`, Path: "bin/tool"}, fstool.ErrBinary, "binary"},
		{fstool.GrepArgs{Pattern: `x`, Path: "../outside"}, fstool.ErrOutside, "climbs out"},
		{fstool.GrepArgs{Pattern: `x`, Path: "/etc/passwd"}, fstool.ErrOutside, "outside"},
		{fstool.GrepArgs{Pattern: `run`, Path: "out"}, fstool.ErrOutside, "symbolic link"},
		{fstool.GrepArgs{Pattern: `run`, Path: "secret.go"}, fstool.ErrOutside, "symbolic link"},
		{fstool.GrepArgs{Pattern: `run`, Path: filepath.Join(dir, "out", "secret.go")}, fstool.ErrOutside, "symbolic link"},
	}
	for _, tt := range tests {
		got, err := call(t, g, tt.args)
		switch {
		case err == nil:
			t.Errorf("grep %+v = %q, want an error", tt.args, got)
		case tt.want != nil && !errors.Is(err, tt.want):
			t.Errorf("grep %+v: %v, want errors.Is %v", tt.args, err, tt.want)
		case !strings.Contains(err.Error(), tt.text):
			t.Errorf("grep %+v: %q, want it to mention %q", tt.args, err, tt.text)
		case strings.Contains(err.Error(), "CANARY"):
			t.Errorf("grep %+v: the error shows outside content: %v", tt.args, err)
		}
	}
}
