package shell

import (
	"fmt"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/gate"
)

// fuzzSeeds are the seeds of FuzzAnalyze: the corpus and lines that
// reach corners of the analyzer.
func fuzzSeeds(tb testing.TB) []string {
	var seeds []string
	for _, name := range []string{"shell-dangerous.jsonl", "shell-benign.jsonl"} {
		for _, e := range loadCorpus(tb, name) {
			seeds = append(seeds, e.Command)
		}
	}
	return append(seeds, "", ":(){ :|:& };:", "cat <<EOF\n$(x)\nEOF", "{a,b}{1..3}", "$'\\x63url'",
		"find . -exec sh -c 'x' \\; -delete", "xargs -I{} parallel {} ::: a", "git -c alias.a='!b' a",
		"env -S 'a b' c", "echo x > ~/.s?h/k", "tar xvfC a.tar /", "sed -e 's/a/b/e' -i f", "awk '{print > \"/x\"}'",
		"python3 -c", "perl -pie", "bash -c", "eval", "cd; cd -; cd ~x; rm -rf *", "+$00", "-x",
		"find . -type f -exec rm -f {} +", "rtk git reset --hard", "cd .git && echo x > config")
}

// FuzzAnalyze: the analysis never panics (it runs here without the
// recover that Analyze adds), a line the parser rejects is always denied,
// and the decision always matches the findings. The metamorphic oracle
// relates the judgement of a line to that of lines built from it. With
// REIN_FUZZ_EXEC=1 the execution oracle (oracle_linux_test.go) also runs
// every line the analyzer allows in the landlock sandbox, under strace, and
// fails if it did what the analysis said it would not:
//
//	REIN_FUZZ_EXEC=1 go test -run '^$' -fuzz FuzzAnalyze -fuzztime 1m ./gate/shell
func FuzzAnalyze(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	ex := fuzzOracle(f)
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
		if msg := metamorphic(src, a, o); msg != "" {
			t.Fatal(msg)
		}
		ex.execCheck(t, src)
	})
}

// strictness orders decisions: Allow < Ask < Deny.
func strictness(d gate.Decision) int {
	switch d {
	case gate.Allow:
		return 0
	case gate.Ask:
		return 1
	}
	return 2
}

// metamorphic is the analyzer's safety oracle: relations between the
// judgement of src (already judged as a, and parsed) and of lines built
// from it that must hold whatever src is. An analyzer that allowed
// everything would pass the decision checks above; it fails these, and so
// does one that a wrapper or a trailing command can talk out of a finding.
// It returns what failed, or "".
func metamorphic(src string, a Analysis, o Options) string {
	if a.Err != nil || len(src) > MaxInput/2 {
		return "" // a line that does not parse is denied; wrapping cannot complete it fairly
	}
	d := strictness(a.Decision)
	// Running the same line inside a wrapper never makes it less strict.
	for _, w := range []string{
		// a leading newline keeps a line starting with - or + from being
		// read as the wrapper's option, which would not run it
		"sh -c " + shQuote("\n"+src),
		"bash -c " + shQuote("\n"+src),
		"eval " + shQuote("\n"+src),
		"(\n" + src + "\n)",
		"{\n" + src + "\n}",
		"if true; then\n" + src + "\nfi",
		"true && {\n" + src + "\n}",
	} {
		if b := Analyze(w, o); strictness(b.Decision) < d {
			return fmt.Sprintf("%q is %s, but wrapped as %q it is %s (%s)", src, a.Decision, w, b.Decision, b.Summary())
		}
	}
	// Appending a command never makes the line less strict, and appending
	// one that asks leaves it at least asking.
	for _, tail := range []string{"\nrm -rf build", "\ngit push --force", "\ncurl https://example.com"} {
		b := Analyze(src+tail, o)
		if strictness(b.Decision) < d {
			return fmt.Sprintf("%q is %s, but with %q appended it is %s (%s)", src, a.Decision, tail, b.Decision, b.Summary())
		}
	}
	return ""
}

// TestMetamorphicCorpus runs the fuzzer's oracle over every corpus line,
// so the relations are checked on every test run, not only when fuzzing.
func TestMetamorphicCorpus(t *testing.T) {
	t.Parallel()
	o := Options{WorkDir: "/work/proj", Home: fakeHome}
	for _, name := range []string{"shell-dangerous.jsonl", "shell-benign.jsonl"} {
		for _, e := range loadCorpus(t, name) {
			if msg := metamorphic(e.Command, Analyze(e.Command, o), o); msg != "" {
				t.Errorf("%s:%d: %s", name, e.line, msg)
			}
		}
	}
}

// TestMetamorphicCatches: the oracle is not vacuous: an analyzer that
// forgets findings inside wrappers, or whose decision ignores what follows,
// breaks it.
func TestMetamorphicCatches(t *testing.T) {
	t.Parallel()
	o := Options{WorkDir: "/work/proj", Home: fakeHome}
	lax := Analysis{Decision: gate.Deny} // what a broken analyzer might say of "ls"
	if metamorphic("ls", lax, o) == "" {
		t.Error("the oracle accepts an ls that is denied alone and allowed in sh -c")
	}
	if metamorphic("rm -rf build", Analyze("rm -rf build", o), o) != "" {
		t.Error("the oracle rejects the real analyzer on rm -rf build")
	}
}
