package scope_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCheckPath judges arbitrary paths and globs against a work directory
// full of links (every corpus setup at once). It must never panic, and
// whenever the gate allows a path: the path, opened with plain os calls (no
// os.Root), lands inside the work directory, and the file tools, run on it
// through os.Root, read nothing from outside. $OUTSIDE, $WORK and
// $WORK_ALIAS in an input are replaced by the fixture's paths.
func FuzzCheckPath(f *testing.F) {
	for _, e := range loadCorpus(f) {
		var args map[string]any
		must(f, json.Unmarshal(e.Args, &args))
		for _, k := range []string{"path", "pattern", "include"} {
			if s, ok := args[k].(string); ok {
				f.Add(s, k != "path")
			}
		}
	}
	for _, s := range []string{"inside.txt", "sub/inner.txt", "in/out/x", "$WORK/sub", "$WORK_ALIAS/in", "abs-in/inner.txt", "up/work/inside.txt", "root$WORK/inside.txt", "new.txt/x"} {
		f.Add(s, false)
	}
	fx := newFixture(f, allLinks)
	glob, grep := fx.tools["glob"], fx.tools["grep"]
	read := fx.tools["read_file"]
	f.Fuzz(func(t *testing.T, p string, isGlob bool) {
		p = fx.expand(p)
		if isGlob {
			if fx.gate.CheckGlob(p) != nil {
				return
			}
			args, _ := json.Marshal(map[string]string{"pattern": p})
			out, err := glob.Run(t.Context(), args)
			noLeak(t, "glob", p, out, err)
			args, _ = json.Marshal(map[string]string{"pattern": "C[A]NARY|deeper", "include": p})
			out, err = grep.Run(t.Context(), args)
			noLeak(t, "grep", p, out, err)
			return
		}
		if fx.gate.CheckPath(p) != nil {
			return
		}
		osPath := p
		if !filepath.IsAbs(p) {
			osPath = filepath.Join(fx.alias, p)
		}
		osPath = filepath.Clean(osPath) // as the tools do
		if land := landing(osPath, 0); land != "" && land != fx.work && !strings.HasPrefix(land, fx.work+"/") {
			t.Fatalf("the gate allows %q, which lands at %s, outside %s", p, land, fx.work)
		}
		if s := readPlain(osPath); strings.Contains(s, "CANARY") {
			t.Fatalf("the gate allows %q, and a plain read of it shows the outside canary", p)
		}
		args, _ := json.Marshal(map[string]string{"path": p})
		out, err := read.Run(t.Context(), args)
		noLeak(t, "read_file", p, out, err)
		args, _ = json.Marshal(map[string]string{"pattern": "**", "path": p})
		out, err = glob.Run(t.Context(), args)
		noLeak(t, "glob", p, out, err)
	})
}

func noLeak(t *testing.T, tool, p, out string, err error) {
	t.Helper()
	for _, s := range []string{out, ""} {
		if err != nil {
			s = err.Error()
		}
		if strings.Contains(s, "CANARY") || strings.Contains(s, "deeper.txt") {
			t.Fatalf("%s on %q shows something outside the work directory: %.300q", tool, p, s)
		}
	}
}

// landing returns where the clean absolute path p lands with every
// symbolic link resolved, following dangling links to where a file would
// be created; "" when that cannot be told (a loop).
func landing(p string, depth int) string {
	if depth > 40 {
		return ""
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	if info, err := os.Lstat(p); err == nil && info.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return ""
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		return landing(filepath.Clean(target), depth+1)
	}
	dir := filepath.Dir(p)
	if dir == p {
		return p
	}
	parent := landing(dir, depth)
	if parent == "" {
		return ""
	}
	return filepath.Join(parent, filepath.Base(p))
}

// readPlain reads at most 64 KB of the regular file at p, with no root.
func readPlain(p string) string {
	info, err := os.Stat(p)
	if err != nil || !info.Mode().IsRegular() {
		return ""
	}
	fh, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer fh.Close()
	b, _ := io.ReadAll(io.LimitReader(fh, 64<<10))
	return string(b)
}
