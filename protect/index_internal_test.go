package protect

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// matchLinear is Match as it was before the index and the suffix fast
// path: every rule in turn, the built-in ones first, each element matched
// with path.Match. Match must agree with it on every path.
func matchLinear(l *List, rel string) (Rule, bool) {
	p := normalize(rel)
	if p == "" {
		return Rule{}, false
	}
	elems := strings.Split(p, "/")
	rules := builtin()
	if l != nil {
		rules = append(slices.Clip(rules), l.extra...)
	}
	for _, c := range rules {
		if linearMatches(c, elems) {
			return c.Rule, true
		}
	}
	return Rule{}, false
}

func linearMatches(c compiled, elems []string) bool {
	n := len(c.elems)
	for i := 0; i+n <= len(elems); i++ {
		if !c.dir && i+n != len(elems) {
			continue
		}
		all := true
		for j, pat := range c.elems {
			if ok, err := path.Match(pat, elems[i+j]); err != nil || !ok {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// indexLists are the lists the index is checked with: the built-in one,
// and one with extra rules that overlap built-in ones, start with a
// pattern, and have a pattern in a later element.
func indexLists() []*List {
	return []*List{
		Default(),
		nil,
		Default().With(
			Rule{Pattern: "deploy/", Why: "extra dir"},
			Rule{Pattern: "*.key", Why: "extra glob"},
			Rule{Pattern: ".git/", Why: "shadowed by the built-in one"},
			Rule{Pattern: "ops/*/secrets", Why: "a pattern inside"},
			Rule{Pattern: "[abc]x/", Why: "a class first"},
			Rule{Pattern: "build/*.o", Why: "a suffix inside"},
			Rule{Pattern: "*", Why: "anything, last"},
			Rule{Pattern: ".envrc", Why: "shadowed file"},
		),
	}
}

// samplePaths: every rule's pattern, in places and forms that match and
// that almost do, and the repository's own paths.
func samplePaths(tb testing.TB) []string {
	var ps []string
	for _, l := range indexLists() {
		for _, r := range l.Rules() {
			pat := strings.TrimSuffix(r.Pattern, "/")
			for _, f := range []string{"%s", "a/%s", "a/b/%s", "%s/x", "a/%s/x/y", "%s.bak", "x%s", "%s/", "./%s", "A/../%s", "%s.", "%s ", `a\%s`} {
				p := strings.ReplaceAll(f, "%s", pat)
				ps = append(ps, p, strings.ToUpper(p), strings.ReplaceAll(p, "*", "z"), strings.ReplaceAll(p, "[abc]", "b"))
			}
		}
	}
	ps = append(ps, "", "/", ".", "..", "//", "a//b", "/abs/.git/x", ".g\u200cit/x", "ops/prod/secrets", "ops/secrets", "bx/1", "dx/1")
	root, _ := filepath.Abs("..")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if rel, rerr := filepath.Rel(root, p); err == nil && rerr == nil {
			ps = append(ps, filepath.ToSlash(rel))
		}
		return nil
	})
	return ps
}

// TestIndexAgrees: Match through the index gives the same rule as trying
// every rule in turn, on every sample path and list.
func TestIndexAgrees(t *testing.T) {
	for li, l := range indexLists() {
		for _, p := range samplePaths(t) {
			got, gok := l.Match(p)
			want, wok := matchLinear(l, p)
			if gok != wok || got != want {
				t.Errorf("list %d, %q: Match = %q %v, every rule in turn = %q %v", li, p, got.Pattern, gok, want.Pattern, wok)
			}
		}
	}
}

// TestNormal: a path normal accepts is its own normal form.
func TestNormal(t *testing.T) {
	for _, p := range samplePaths(t) {
		if normal(p) && normalize(p) != p {
			t.Errorf("normal(%q) but normalize gives %q", p, normalize(p))
		}
	}
}

// FuzzIndex checks the index and the fast path against trying every rule
// on the normalized path, for any path.
func FuzzIndex(f *testing.F) {
	for _, s := range []string{".git/config", "sub/.git/hooks/x", "README.md", "deploy/x", "a/b.key", "ops/q/secrets", "bx", "A/.ENVRC", "x/.git./y", ""} {
		f.Add(s)
	}
	lists := indexLists()
	f.Fuzz(func(t *testing.T, p string) {
		for li, l := range lists {
			got, gok := l.Match(p)
			want, wok := matchLinear(l, p)
			if gok != wok || got != want {
				t.Fatalf("list %d, %q: Match = %q %v, every rule in turn = %q %v", li, p, got.Pattern, gok, want.Pattern, wok)
			}
		}
		if normal(p) && normalize(p) != p {
			t.Fatalf("normal(%q) but normalize gives %q", p, normalize(p))
		}
	})
}
