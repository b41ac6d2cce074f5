package fs_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/tool"
	fstool "github.com/reinhq/rein/tool/fs"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/read")

// lines returns n numbered lines "line 1\n" … "line n\n".
func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFileGolden(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"ten.txt":      lines(10),
		"no-final.txt": "alpha\nbeta\ngamma",
		"empty.txt":    "",
		"blank.txt":    "\n\n",
		"long.txt":     "short\n" + strings.Repeat("é", 2500) + "\nafter\n",
		"crlf.txt":     "one\r\ntwo\r\n",
		"unicode.txt":  "héllo 漢字 😀\n\tindented\n",
		"big.txt":      lines(2500),
		"dir/sub.txt":  "nested\n",
	}
	root, _ := workspace(t, files)
	rf := fstool.ReadFile(root, fstool.Options{})
	small := fstool.ReadFile(root, fstool.Options{DefaultLimit: 3})
	tests := []struct {
		name string
		tool tool.Tool
		args fstool.ReadArgs
	}{
		{"whole", rf, fstool.ReadArgs{Path: "ten.txt"}},
		{"window", rf, fstool.ReadArgs{Path: "ten.txt", Offset: 4, Limit: 3}},
		{"window-to-end", rf, fstool.ReadArgs{Path: "ten.txt", Offset: 8, Limit: 5}},
		{"last-line", rf, fstool.ReadArgs{Path: "ten.txt", Offset: 10}},
		{"default-limit-option", small, fstool.ReadArgs{Path: "ten.txt"}},
		{"no-final-newline", rf, fstool.ReadArgs{Path: "no-final.txt"}},
		{"empty", rf, fstool.ReadArgs{Path: "empty.txt"}},
		{"blank-lines", rf, fstool.ReadArgs{Path: "blank.txt"}},
		{"long-line-cut", rf, fstool.ReadArgs{Path: "long.txt"}},
		{"crlf", rf, fstool.ReadArgs{Path: "crlf.txt"}},
		{"unicode", rf, fstool.ReadArgs{Path: "unicode.txt"}},
		{"default-limit-2000", rf, fstool.ReadArgs{Path: "big.txt", Offset: 2}},
		{"nested-dot-slash", rf, fstool.ReadArgs{Path: "./dir/../dir/sub.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := call(t, tt.tool, tt.args)
			if err != nil {
				t.Fatalf("read_file %+v: %v", tt.args, err)
			}
			golden := filepath.Join("testdata", "read", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("read_file %+v =\n%s\nwant (%s)\n%s", tt.args, got, golden, want)
			}
		})
	}
}

func TestReadFileOutputCap(t *testing.T) {
	t.Parallel()
	// 2000 lines of 1000 characters is 2 MB: more than one result should
	// carry, so it stops early at a line boundary and says where to go on.
	line := strings.Repeat("x", 1000) + "\n"
	root, _ := workspace(t, map[string]string{"wide.txt": strings.Repeat(line, 2000)})
	got, err := call(t, fstool.ReadFile(root, fstool.Options{}), fstool.ReadArgs{Path: "wide.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 300<<10 {
		t.Errorf("result is %d bytes, want it capped near 256 KB", len(got))
	}
	n := strings.Count(got, "\n")
	want := fmt.Sprintf("[lines 1-%d of 2000. Read on with offset=%d]", n, n+1)
	if !strings.HasSuffix(got, want) {
		t.Errorf("result ends %q, want %q", got[len(got)-80:], want)
	}
}

func TestReadFileErrors(t *testing.T) {
	t.Parallel()
	root, dir := workspace(t, map[string]string{
		"ok.txt":     "one\ntwo\n",
		"nul.bin":    "text\x00more",
		"latin1.txt": "caf\xe9\n",
		"big.txt":    strings.Repeat("a", 100),
		"sub/x.txt":  "x",
	})
	outside := filepath.Join(filepath.Dir(dir), "outside")
	if err := os.WriteFile(outside, []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, outside, filepath.Join(dir, "link-out"))
	symlink(t, "../outside", filepath.Join(dir, "rel-out"))
	symlink(t, filepath.Join(dir, "ok.txt"), filepath.Join(dir, "abs-in"))
	rf := fstool.ReadFile(root, fstool.Options{MaxFileBytes: 50})
	tests := []struct {
		name string
		args any
		want error
		text string // in the message
	}{
		{"missing", fstool.ReadArgs{Path: "nope.txt"}, tool.ErrNotExist, "glob"},
		{"missing dir part", fstool.ReadArgs{Path: "ok.txt/x"}, tool.ErrNotExist, "not a directory"},
		{"directory", fstool.ReadArgs{Path: "sub"}, fstool.ErrIsDir, "glob"},
		{"NUL byte in file", fstool.ReadArgs{Path: "nul.bin"}, fstool.ErrBinary, "is binary"},
		{"not UTF-8", fstool.ReadArgs{Path: "latin1.txt"}, fstool.ErrBinary, "is binary"},
		{"too large", fstool.ReadArgs{Path: "big.txt"}, fstool.ErrTooLarge, "grep"},
		{"offset past end", fstool.ReadArgs{Path: "ok.txt", Offset: 3}, nil, "offset from 1 to 2"},
		{"dotdot", fstool.ReadArgs{Path: "../outside"}, fstool.ErrOutside, "climbs out"},
		{"absolute outside", fstool.ReadArgs{Path: outside}, fstool.ErrOutside, "outside the working directory"},
		{"etc passwd", fstool.ReadArgs{Path: "/etc/passwd"}, fstool.ErrOutside, "outside"},
		{"home", fstool.ReadArgs{Path: "~/.ssh/id_rsa"}, fstool.ErrOutside, "home directory"},
		{"NUL in path", fstool.ReadArgs{Path: "ok.txt\x00.png"}, fstool.ErrOutside, "NUL"},
		{"link out", fstool.ReadArgs{Path: "link-out"}, fstool.ErrOutside, "symbolic link"},
		{"relative link out", fstool.ReadArgs{Path: "rel-out"}, fstool.ErrOutside, "symbolic link"},
		{"absolute link in", fstool.ReadArgs{Path: "abs-in"}, fstool.ErrOutside, "absolute"},
		{"offset 0", map[string]any{"path": "ok.txt", "offset": 0}, tool.ErrArgs, "offset"},
		{"limit too big", map[string]any{"path": "ok.txt", "limit": 2001}, tool.ErrArgs, "limit"},
		{"unknown field", map[string]any{"path": "ok.txt", "lines": 3}, tool.ErrArgs, "lines"},
		{"no path", map[string]any{}, tool.ErrArgs, "path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := call(t, rf, tt.args)
			switch {
			case err == nil:
				t.Fatalf("read_file %+v = %q, want an error", tt.args, got)
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Errorf("read_file %+v: %v, want errors.Is %v", tt.args, err, tt.want)
			case !strings.Contains(err.Error(), tt.text):
				t.Errorf("read_file %+v: %q, want it to mention %q", tt.args, err, tt.text)
			case strings.Contains(err.Error(), "SECRET"):
				t.Errorf("read_file %+v: the error shows the outside file's content: %v", tt.args, err)
			}
		})
	}
}

func TestReadFileInsidePaths(t *testing.T) {
	t.Parallel()
	root, dir := workspace(t, map[string]string{"a/b/c.txt": "deep\n", "top.txt": "top\n"})
	symlink(t, "a/b", filepath.Join(dir, "ab"))               // a link inside, to inside
	symlink(t, "../../top.txt", filepath.Join(dir, "a/b/up")) // climbs, but stays inside
	// The work dir reached through a symbolic link: absolute paths under
	// either name are inside.
	alias := filepath.Join(filepath.Dir(dir), "alias")
	symlink(t, dir, alias)
	aliased, err := os.OpenRoot(alias)
	if err != nil {
		t.Fatal(err)
	}
	defer aliased.Close()
	for _, tt := range []struct {
		root *os.Root
		path string
		want string
	}{
		{root, "a/b/c.txt", "deep"},
		{root, "./a/./b/c.txt", "deep"},
		{root, "a/x/../b/c.txt", "deep"},
		{root, "ab/c.txt", "deep"},
		{root, "a/b/up", "top"},
		{root, filepath.Join(dir, "a/b/c.txt"), "deep"},
		{root, dir + "//a/b/../b/c.txt", "deep"},
		{aliased, filepath.Join(alias, "top.txt"), "top"},
		{aliased, filepath.Join(dir, "top.txt"), "top"},
		{root, "~top.txt", ""}, // a leading ~ is refused, whatever follows
	} {
		got, err := call(t, fstool.ReadFile(tt.root, fstool.Options{}), fstool.ReadArgs{Path: tt.path})
		if tt.want == "" {
			if !errors.Is(err, fstool.ErrOutside) {
				t.Errorf("read_file %q = %q, %v; want ErrOutside", tt.path, got, err)
			}
			continue
		}
		if err != nil || !strings.Contains(got, "\t"+tt.want+"\n") {
			t.Errorf("read_file %q = %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
}
