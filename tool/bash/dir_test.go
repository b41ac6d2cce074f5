package bash

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/tool"
)

// tree makes a work dir with links that stay inside and links that lead out:
//
//	root/sub/deeper/
//	root/file.txt
//	root/link-in     -> sub
//	root/sub/link-root -> ..
//	root/link-out    -> <outside>
//	root/link-up     -> ..
//	root/link-abs    -> <root>/sub   (absolute, inside)
//	root/loop-a <-> root/loop-b
//	root/sub/out-deep -> ../../<outside base>
//
// It returns the root as given and as resolved, and the outside dir.
func tree(t testing.TB) (root, rootReal, out string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "work")
	out = filepath.Join(base, "secret")
	for _, d := range []string{filepath.Join(root, "sub", "deeper"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"link-in":       "sub",
		"sub/link-root": "..",
		"link-out":      out,
		"link-up":       "..",
		"link-abs":      filepath.Join(root, "sub"),
		"loop-a":        "loop-b",
		"loop-b":        "loop-a",
		"sub/out-deep":  "../../secret",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, rootReal, out
}

func TestResolveDir(t *testing.T) {
	t.Parallel()
	root, real, out := tree(t)
	sub := filepath.Join(real, "sub")
	linkToRoot := filepath.Join(t.TempDir(), "root-link")
	if err := os.Symlink(root, linkToRoot); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		root, workdir string
		want          string // the resolved dir; "" when refused
		err           error  // what a refusal wraps, when it must wrap something
	}{
		// Legitimate directories, also reached through links inside.
		{root, "", real, nil},
		{root, ".", real, nil},
		{root, "./", real, nil},
		{root, "sub", sub, nil},
		{root, "./sub/deeper/", filepath.Join(sub, "deeper"), nil},
		{root, "sub/..", real, nil},
		{root, "sub/deeper/../..", real, nil},
		{root, "link-in", sub, nil},
		{root, "sub/link-root", real, nil},
		{root, "sub/link-root/sub", sub, nil},
		{root, "link-abs", sub, nil},
		{root, sub, sub, nil},                        // absolute, inside
		{root, filepath.Join(root, "sub"), sub, nil}, // absolute, through the unresolved root
		{linkToRoot, "sub", sub, nil},                // the work dir itself reached through a link
		{linkToRoot, filepath.Join(linkToRoot, "sub"), sub, nil},

		// Escapes.
		{root, "..", "", ErrOutside},
		{root, "../secret", "", ErrOutside},
		{root, "sub/../../secret", "", ErrOutside},
		{root, "sub/deeper/../../..", "", ErrOutside},
		{root, "/", "", ErrOutside},
		{root, "/etc", "", ErrOutside},
		{root, out, "", ErrOutside},
		{root, filepath.Join(root, ".."), "", ErrOutside},
		{root, "link-out", "", ErrOutside},
		{root, "link-up", "", ErrOutside},
		{root, "link-up/work/../secret", "", ErrOutside},
		{root, "sub/out-deep", "", ErrOutside},
		{root, "sub/link-root/link-out", "", ErrOutside},
		{linkToRoot, "..", "", ErrOutside},

		// Not usable directories.
		{root, "nope", "", tool.ErrNotExist},
		{root, "~", "", tool.ErrNotExist},
		{root, "file.txt", "", nil},
		{root, "loop-a", "", nil},
		{filepath.Join(root, "gone"), ".", "", nil},
	} {
		got, err := resolveDir(c.root, c.workdir)
		switch {
		case c.want != "" && (err != nil || got != c.want):
			t.Errorf("resolveDir(%s, %q) = %q, %v; want %q", c.root, c.workdir, got, err, c.want)
		case c.want == "" && err == nil:
			t.Errorf("resolveDir(%s, %q) = %q; want a refusal", c.root, c.workdir, got)
		case c.want == "" && c.err != nil && !errors.Is(err, c.err):
			t.Errorf("resolveDir(%s, %q) error = %v; want %v", c.root, c.workdir, err, c.err)
		}
	}
}

// The tool refuses an escaping workdir before the executor runs, and its
// lookup refuses it for the existence gate too.
func TestWorkdirEscapeRefusedByTool(t *testing.T) {
	t.Parallel()
	root, _, out := tree(t)
	ex := &countExec{}
	tl := RunBash(ex, root, Options{})
	for _, wd := range []string{"..", "link-out", "sub/out-deep", out, "/"} {
		args := json.RawMessage(`{"command":"touch pwned","workdir":` + quote(wd) + `}`)
		if _, err := tl.Run(t.Context(), args); !errors.Is(err, ErrOutside) {
			t.Errorf("workdir %q: Run error = %v, want ErrOutside", wd, err)
		}
		if err := tl.(tool.Exister).Exists(t.Context(), args); !errors.Is(err, ErrOutside) {
			t.Errorf("workdir %q: Exists error = %v, want ErrOutside", wd, err)
		}
	}
	if err := tl.(tool.Exister).Exists(t.Context(), json.RawMessage(`{"command":"ls","workdir":"nope"}`)); !errors.Is(err, tool.ErrNotExist) {
		t.Errorf("missing workdir: Exists error = %v, want ErrNotExist", err)
	}
	if err := tl.(tool.Exister).Exists(t.Context(), json.RawMessage(`{"command":"ls","workdir":"link-in"}`)); err != nil {
		t.Errorf("workdir through a link inside: Exists error = %v, want nil", err)
	}
	if ex.n != 0 {
		t.Errorf("the executor ran %d commands with refused workdirs", ex.n)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

type countExec struct{ n int }

func (*countExec) Name() string { return "count" }
func (e *countExec) Exec(context.Context, sandbox.Cmd) (sandbox.Result, error) {
	e.n++
	return sandbox.Result{}, nil
}

// FuzzResolveDir checks that whatever workdir the model sends, a directory
// resolveDir accepts is a real directory (no links left) inside the work
// dir's real path.
func FuzzResolveDir(f *testing.F) {
	for _, s := range []string{"", ".", "sub", "sub/..", "..", "../secret", "link-out", "link-up/work/sub",
		"sub/link-root/link-in", "sub/out-deep/..", "/", "//", "/tmp", "link-in/../../work", "loop-a", "a\x00b",
		"./././sub/deeper/../../link-abs", "sub/link-root/sub/link-root/link-up/secret"} {
		f.Add(s)
	}
	root, rootReal, _ := tree(f)
	f.Fuzz(func(t *testing.T, workdir string) {
		got, err := resolveDir(root, workdir)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(rootReal, got)
		if rerr != nil || !filepath.IsLocal(rel) {
			t.Fatalf("resolveDir(%q) = %q, outside %s", workdir, got, rootReal)
		}
		if again, err := filepath.EvalSymlinks(got); err != nil || again != got {
			t.Fatalf("resolveDir(%q) = %q, which still resolves to %q (%v)", workdir, got, again, err)
		}
		if info, err := os.Stat(got); err != nil || !info.IsDir() {
			t.Fatalf("resolveDir(%q) = %q, not a directory (%v)", workdir, got, err)
		}
		if strings.Contains(got, "secret") {
			t.Fatalf("resolveDir(%q) = %q reached the secret dir", workdir, got)
		}
	})
}
