package protect_test

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/protect"
)

// FuzzMatch checks the properties the gates rely on: Match never panics;
// case, a leading "./", doubled slashes and a ".." that climbs back in do
// not change the answer; a protected path is protected at any depth; and
// everything below a protected directory is protected.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{".git/config", "sub/.git/hooks/x", "README.md", "src/gitconfig.go",
		"docs/.bashrc.md", ".vscode/tasks.json", "a/../.rein/config.toml", `.git\hooks`, ".g\u200cit/x", ""} {
		f.Add(s)
	}
	l := protect.Default()
	f.Fuzz(func(t *testing.T, p string) {
		r, ok := l.Match(p)
		if ok && r.Why == "" {
			t.Fatalf("Match(%q): a rule without a reason", p)
		}
		same := func(q string) {
			t.Helper()
			if _, ok2 := l.Match(q); ok2 != ok {
				t.Fatalf("Match(%q) = %v but Match(%q) = %v", p, ok, q, ok2)
			}
		}
		same(strings.ToUpper(p))
		same(strings.ToLower(p))
		if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "\\") {
			same("./" + p)
			same("x/../" + p)
		}
		same(strings.ReplaceAll(p, "/", "//"))
		if ok {
			if _, ok := l.Match("deep/er/" + strings.TrimLeft(p, `/\`)); !ok {
				t.Fatalf("%q is protected, deep/er/%s is not", p, p)
			}
			if strings.HasSuffix(r.Pattern, "/") {
				if _, ok := l.Match(p + "/child"); !ok {
					t.Fatalf("%q is under %s, %s/child is not protected", p, r.Pattern, p)
				}
			}
		}
	})
}
