package shell

import (
	"testing"

	"github.com/reinhq/rein/protect"
)

// TestProtectHeads: the cheap test never rules out a path that
// protect.Match protects, with literal heads, glob heads (ruled out by
// their literal part first) and case folded.
func TestProtectHeads(t *testing.T) {
	t.Parallel()
	l := protect.Default().With(protect.Rule{Pattern: "deploy/", Why: "x"}, protect.Rule{Pattern: "ci-*.y?ml", Why: "x"},
		protect.Rule{Pattern: "[ab]x*.sh", Why: "x"})
	h := newProtectHeads(l)
	for _, c := range []struct {
		rel string
		may bool
	}{
		{".git/hooks/pre-commit", true}, {".GIT/config", true}, {"sub/.bashrc", true}, {"my.code-workspace", true},
		{"A.Code-Workspace", true}, {"deploy/run.sh", true}, {"ci-main.yaml", true}, {"CI-X.YAML", true}, {"ci-x.yml", false}, {"bx1.sh", true},
		{"mise.toml", true}, {"src/main.go", false}, {"code-workspace", false}, {"ci-main.txt", false}, {"cx.sh", false},
		{"README.md", false}, {"deployx/a", false},
	} {
		if got := h.may(c.rel); got != c.may {
			t.Errorf("may(%q) = %v, want %v", c.rel, got, c.may)
		}
		if _, ok := l.Match(c.rel); ok && !h.may(c.rel) {
			t.Errorf("%q is protected but ruled out", c.rel)
		}
	}
	for _, c := range []struct{ pat, need string }{
		{"*.code-workspace", ".code-workspace"}, {"ci-*.y?ml", "ci-"}, {"[ab]x*.sh", ".sh"}, {"a[b", ""}, {"*", ""},
	} {
		if got := globNeed(c.pat); got != c.need {
			t.Errorf("globNeed(%q) = %q, want %q", c.pat, got, c.need)
		}
	}
}
