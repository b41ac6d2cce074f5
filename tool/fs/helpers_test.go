package fs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/tool"
	fstool "github.com/reinhq/rein/tool/fs"
)

// workspace builds a work directory holding files (path → content) and
// returns it with a root opened on it, closed when the test ends.
func workspace(t testing.TB, files map[string]string) (*os.Root, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
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
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root, dir
}

// call runs a tool with arguments marshalled from args.
func call(t testing.TB, tl tool.Tool, args any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tl.Run(t.Context(), raw)
}

// byName returns the tool of that name among fstool.Tools.
func byName(root *os.Root, o fstool.Options, name string) tool.Tool {
	for _, tl := range fstool.Tools(root, o) {
		if tl.Spec().Name == name {
			return tl
		}
	}
	panic("no tool " + name)
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func readOS(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
