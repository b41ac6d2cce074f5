package scope_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate/scope"
	"github.com/reinhq/rein/tool"
	fstool "github.com/reinhq/rein/tool/fs"
)

// canary is the content of the file outside the work directory. No tool
// output may ever contain it.
const canary = "CANARY-5e1d-outside-secret"

// fixture is a temporary tree:
//
//	base/work          the work directory: inside.txt, sub/inner.txt, links by setup
//	base/alias         -> work: the gate and the root are opened through it,
//	                   so the work directory sits behind a symbolic link
//	base/outside       secret (holding canary), sub/deeper.txt
type fixture struct {
	base, work, alias, outside string
	root                       *os.Root
	gate                       *scope.Gate
	tools                      map[string]tool.Tool
}

// setups are the corpus's "setup" values: links made in the work directory.
// $OUT is the outside directory's absolute path.
var setups = map[string][][2]string{ // link name → target
	"":                      nil,
	"link-dir-out":          {{"out", "$OUT"}},
	"link-file-out":         {{"secret.txt", "$OUT/secret"}},
	"link-chain":            {{"a", "b"}, {"b", "$OUT"}},
	"link-abs":              {{"root", "/"}},
	"link-dotdot":           {{"up", ".."}},
	"link-dotdot2":          {{"up2", "../.."}},
	"link-rel-out":          {{"rel", "../outside"}},
	"link-inside-then-out":  {{"in", "sub"}, {"sub/out", "$OUT"}},
	"link-sub-escape":       {{"sub/esc", "../../outside"}},
	"link-loop":             {{"loop", "loop"}},
	"link-dangling-out":     {{"new.txt", "$OUT/new.txt"}},
	"link-dangling-dir-out": {{"newdir", "$OUT/newdir"}},
	"link-inside":           {{"in", "sub"}, {"inner-link.txt", "sub/inner.txt"}, {"abs-in", "$WORK/sub"}},
}

// allLinks is every setup's links at once, for the fuzzer and benchmarks.
const allLinks = "all"

func init() {
	var all [][2]string
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(setups)) {
		for _, l := range setups[name] {
			if !seen[l[0]] {
				seen[l[0]] = true
				all = append(all, l)
			}
		}
	}
	setups[allLinks] = all
}

func newFixture(t testing.TB, setup string) *fixture {
	t.Helper()
	links, ok := setups[setup]
	if !ok {
		t.Fatalf("unknown setup %q", setup)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{base: base, work: filepath.Join(base, "work"), alias: filepath.Join(base, "alias"), outside: filepath.Join(base, "outside")}
	files := map[string]string{
		"work/inside.txt":        "inside\n",
		"work/sub/inner.txt":     "inner\n",
		"outside/secret":         canary + "\n",
		"outside/sub/deeper.txt": canary + " deeper\n",
	}
	for name, content := range files {
		p := filepath.Join(base, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	must(t, os.Symlink(f.work, f.alias))
	for _, l := range links {
		target := strings.NewReplacer("$OUT", f.outside, "$WORK", f.work).Replace(l[1])
		must(t, os.Symlink(target, filepath.Join(f.work, l[0])))
	}
	if f.root, err = os.OpenRoot(f.alias); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.root.Close() })
	if f.gate, err = scope.NewGate(f.alias); err != nil {
		t.Fatal(err)
	}
	f.tools = map[string]tool.Tool{}
	for _, tl := range fstool.Tools(f.root, fstool.Options{}) {
		f.tools[tl.Spec().Name] = tl
	}
	return f
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// expand replaces the corpus placeholders in args.
func (f *fixture) expand(args string) string {
	return strings.NewReplacer("$OUTSIDE", f.outside, "$WORK_ALIAS", f.alias, "$WORK", f.work).Replace(args)
}

// state is everything outside the work directory that a tool could touch:
// the outside tree, file by file, and the names in base.
func (f *fixture) state(t testing.TB) map[string]string {
	t.Helper()
	m := map[string]string{}
	entries, err := os.ReadDir(f.base)
	must(t, err)
	for _, e := range entries {
		m["base:"+e.Name()] = e.Type().String()
	}
	err = filepath.WalkDir(f.outside, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		m[p] = v
		return nil
	})
	must(t, err)
	return m
}

// diff describes how two states differ.
func diff(before, after map[string]string) string {
	var d []string
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if a, ok := after[k]; !ok {
			d = append(d, "removed "+k)
		} else if a != before[k] {
			d = append(d, fmt.Sprintf("changed %s: %q → %q", k, before[k], a))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[k]; !ok {
			d = append(d, "created "+k)
		}
	}
	return strings.Join(d, "; ")
}
