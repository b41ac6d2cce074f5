package fs_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	fstool "github.com/reinhq/rein/tool/fs"
)

// snapshot returns every file under dir with its content and every
// directory, for comparing before and after.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			m[rel] = "dir " + info.Mode().String()
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m[rel] = "link " + target
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = fmt.Sprintf("file %v %s", info.Mode(), b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRaceSwapDirForLink runs the file tools on d/file in a loop while
// another goroutine keeps swapping d for a symbolic link to a directory
// outside and back. Whatever the timing, nothing outside may be read or
// written: os.Root resolves each name under the work directory's open
// handle, so a swap between a check and a use cannot lead out.
func TestRaceSwapDirForLink(t *testing.T) {
	t.Parallel()
	const canary = "CANARY-7f3a9c-outside-content"
	root, dir := workspace(t, map[string]string{"d/file": "inside one\n", "d/other.txt": "inside\n"})
	outside := filepath.Join(filepath.Dir(dir), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"file", "other.txt"} {
		if err := os.WriteFile(filepath.Join(outside, name), []byte(canary+" one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, outside)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	swaps := 0
	wg.Go(func() {
		d, real, link := filepath.Join(dir, "d"), filepath.Join(dir, "d.real"), filepath.Join(dir, "d.link")
		// place renames from to to. A write_file that ran while d was
		// missing may have made a new d (it creates parent directories):
		// that one is dropped.
		place := func(from, to string) bool {
			for range 10 {
				if err := os.Rename(from, to); err == nil {
					return true
				}
				os.RemoveAll(to)
			}
			t.Errorf("cannot rename %s to %s", from, to)
			return false
		}
		for ctx.Err() == nil {
			// To the link: d moves aside, the link takes its name.
			os.RemoveAll(link)
			if err := os.Symlink(outside, link); err != nil {
				t.Error(err)
				return
			}
			if !place(d, real) || !place(link, d) {
				return
			}
			// And back.
			if !place(d, link) || !place(real, d) {
				return
			}
			swaps++
		}
	})

	rf, wf, ef := byName(root, fstool.Options{}, "read_file"), byName(root, fstool.Options{}, "write_file"), byName(root, fstool.Options{}, "edit_file")
	gl, gr := byName(root, fstool.Options{}, "glob"), byName(root, fstool.Options{}, "grep")
	tools := map[string]func() (string, error){
		"read_file":  func() (string, error) { return call(t, rf, fstool.ReadArgs{Path: "d/file"}) },
		"write_file": func() (string, error) { return call(t, wf, fstool.WriteArgs{Path: "d/file", Content: "inside one\n"}) },
		"edit_file": func() (string, error) {
			out, err := call(t, ef, fstool.EditArgs{Path: "d/file", OldString: "one", NewString: "two"})
			if err == nil {
				out2, err2 := call(t, ef, fstool.EditArgs{Path: "d/file", OldString: "two", NewString: "one"})
				return out + "\n" + out2, errors.Join(err, err2)
			}
			return out, err
		},
		"glob":      func() (string, error) { return call(t, gl, fstool.GlobArgs{Pattern: "d/*"}) },
		"glob path": func() (string, error) { return call(t, gl, fstool.GlobArgs{Pattern: "**", Path: "d"}) },
		"grep":      func() (string, error) { return call(t, gr, fstool.GrepArgs{Pattern: "one", Path: "d"}) },
		"grep file": func() (string, error) { return call(t, gr, fstool.GrepArgs{Pattern: "one", Path: "d/file"}) },
		"grep all":  func() (string, error) { return call(t, gr, fstool.GrepArgs{Pattern: ".*"}) },
	}
	names := []string{"read_file", "write_file", "edit_file", "glob", "glob path", "grep", "grep file", "grep all"}
	runs, oks := 0, map[string]int{}
	for i := 0; i < 2000 && ctx.Err() == nil; i++ {
		name := names[i%len(names)]
		out, err := tools[name]()
		runs++
		if err == nil {
			oks[name]++
		}
		for _, s := range []string{out, fmt.Sprint(err)} {
			if strings.Contains(s, "CANARY") {
				t.Fatalf("%s read outside the work directory: %q", name, s)
			}
		}
	}
	cancel()
	wg.Wait()
	if after := snapshot(t, outside); !maps.Equal(before, after) {
		t.Errorf("the outside directory changed:\nbefore %v\nafter  %v", before, after)
	}
	t.Logf("%d tool runs, %d swaps; successes by tool: %v", runs, swaps, oks)
}
