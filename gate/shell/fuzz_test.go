package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/gate"
)

// FuzzAnalyze: the analysis never panics (it runs here without the
// recover that Analyze adds), a line the parser rejects is always denied,
// and the decision always matches the findings.
func FuzzAnalyze(f *testing.F) {
	for _, name := range []string{"shell-dangerous.jsonl", "shell-benign.jsonl"} {
		for _, e := range loadCorpus(f, name) {
			f.Add(e.Command)
		}
	}
	for _, s := range []string{"", ":(){ :|:& };:", "cat <<EOF\n$(x)\nEOF", "{a,b}{1..3}", "$'\\x63url'",
		"find . -exec sh -c 'x' \\; -delete", "xargs -I{} parallel {} ::: a", "git -c alias.a='!b' a",
		"env -S 'a b' c", "echo x > ~/.s?h/k", "tar xvfC a.tar /", "sed -e 's/a/b/e' -i f", "awk '{print > \"/x\"}'",
		"python3 -c", "perl -pie", "bash -c", "eval", "cd; cd -; cd ~x; rm -rf *"} {
		f.Add(s)
	}
	o := Options{WorkDir: "/work/proj", Home: fakeHome}
	f.Fuzz(func(t *testing.T, src string) {
		a := analyze(src, o, newParser())
		_, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
		if err != nil && len(src) <= MaxInput && a.Decision != gate.Deny {
			t.Fatalf("%q does not parse (%v) but got %s", src, err, a.Decision)
		}
		want := gate.Allow
		for _, fd := range a.Findings {
			if fd.Decision == gate.Deny {
				want = gate.Deny
				break
			}
			if fd.Decision == gate.Ask {
				want = gate.Ask
			} else if fd.Decision != gate.Ask {
				t.Fatalf("%q: finding with decision %s", src, fd.Decision)
			}
		}
		if a.Err != nil {
			want = gate.Deny
		}
		if a.Decision != want {
			t.Fatalf("%q: decision %s, findings say %s", src, a.Decision, want)
		}
	})
}
