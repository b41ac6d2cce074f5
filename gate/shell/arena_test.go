package shell

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

// TestPooledMatchesFresh checks that an analyzer reused from the gate's
// pool, whatever it judged before, judges like a fresh one.
func TestPooledMatchesFresh(t *testing.T) {
	t.Parallel()
	cmds := corpusCommands(t)
	g := NewGate(testOpts)
	kept := make([]Analysis, len(cmds))
	for round := range 2 {
		for i := range cmds {
			c := cmds[(i*7+round)%len(cmds)] // another order each round
			got, want := g.Analyze(c), Analyze(c, testOpts)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: pooled %+v, fresh %+v", c, got, want)
			}
			kept[(i*7+round)%len(cmds)] = got
		}
	}
	// What Analyze returned must not share the pool's buffers: every
	// result, kept while the analyzer judged the rest, is still whole.
	for i, c := range cmds {
		if want := Analyze(c, testOpts); !reflect.DeepEqual(kept[i], want) {
			t.Fatalf("%q: a kept result changed after later analyses: %+v, fresh %+v", c, kept[i], want)
		}
	}
}

type twoCommands struct {
	Command string `json:"command"`
	Setup   string `json:"setup,omitempty"`
}

// TestCheckLentFindings checks the gate's reuse of its findings buffer:
// findings of several command arguments are all kept, and none leaks into
// the next call.
func TestCheckLentFindings(t *testing.T) {
	t.Parallel()
	two := tool.New(tool.Spec{Name: "run_two",
		Roles: map[string]tool.Role{"command": tool.RoleCommand, "setup": tool.RoleCommand}},
		func(context.Context, twoCommands) (string, error) { return "", nil })
	g := NewGate(testOpts)
	check := func(args twoCommands) gate.Verdict {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		return g.Check(t.Context(), &gate.Call{ID: "c", Name: "run_two", Args: b, Tool: two})
	}
	v := check(twoCommands{Command: "curl x.example", Setup: "sudo ls"})
	if v.Decision != gate.Deny || !strings.Contains(v.Reason, "net-tool") || !strings.Contains(v.Reason, "priv-esc") {
		t.Fatalf("two commands: %+v", v)
	}
	if !strings.Contains(v.Hint, "send data off the machine") || !strings.Contains(v.Hint, "escalate privileges") {
		t.Fatalf("two commands hint: %q", v.Hint)
	}
	if v := check(twoCommands{Command: "go test ./..."}); v.Decision != gate.Allow {
		t.Fatalf("after a denied call, an allowed one: %+v", v)
	}
	if v := check(twoCommands{Command: "rm -rf build"}); v.Decision != gate.Ask || strings.Contains(v.Reason, "net-tool") {
		t.Fatalf("stale findings: %+v", v)
	}
}

// TestCredHintIsContains checks the indexed credHint against the plain
// search it replaces.
func TestCredHintIsContains(t *testing.T) {
	t.Parallel()
	naive := func(s string) bool {
		for _, h := range credHints {
			if strings.Contains(s, h) {
				return true
			}
		}
		return false
	}
	words := []string{"", ".", "..", "a", "main.go", "~/.ssh", "x.ssh", ".ss", "credential", "keyrings/x", "Chrome", "chrome",
		"/etc/shadow", "shado", "ssh_host_", "id_ed2551", "id_ed25519.pub", "rclone.conf", "a.oci", ".oc"}
	for _, h := range credHints {
		words = append(words, h, "x"+h, h+"y", h[:len(h)-1], h[1:])
	}
	for _, c := range corpusCommands(t) {
		words = append(words, strings.Fields(c)...)
	}
	for _, w := range words {
		if got, want := credHint(w), naive(w); got != want {
			t.Errorf("credHint(%q) = %v, want %v", w, got, want)
		}
	}
}

// TestWordFastPaths checks that the words word resolves without a builder
// get what the builder would give them.
func TestWordFastPaths(t *testing.T) {
	t.Parallel()
	a := newAnalyzer(newParser())
	pr := prepare(testOpts)
	a.reset(&pr, false)
	sc := &scope{cwd: pr.start}
	var srcs []string
	srcs = append(srcs, corpusCommands(t)...)
	srcs = append(srcs, `echo *.go a?b [ab] [a "x\"y" "" "a b" "a\\b" ~/x ~ x~ 'q' a\*b "$HOME" "x$y"`)
	for _, src := range srcs {
		sc.src = src
		f, err := a.parse(src)
		if err != nil {
			continue
		}
		syntax.Walk(f, func(n syntax.Node) bool {
			w, ok := n.(*syntax.Word)
			if !ok {
				return true
			}
			got := a.word(w, sc)
			want := arg{raw: source(src, w), lit: true}
			var b strings.Builder
			for i, p := range w.Parts {
				a.part(&b, &want, p, i == 0, false, sc)
			}
			want.val = b.String()
			if got.val != want.val || got.lit != want.lit || got.glob != want.glob {
				t.Errorf("%q: word %+v, builder %+v", src, got, want)
			}
			return true
		})
	}
}

// FuzzPooled: an analyzer reused from the gate's pool, after whatever
// lines it judged before, judges a line as a fresh one does.
func FuzzPooled(f *testing.F) {
	for _, c := range corpusCommands(f) {
		f.Add(c)
	}
	g := NewGate(testOpts)
	f.Fuzz(func(t *testing.T, src string) {
		got, want := g.Analyze(src), Analyze(src, testOpts)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: pooled %+v, fresh %+v", src, got, want)
		}
	})
}

// TestCredHintsCoverCredentials: every credential place has a hint, or
// the pre-filter would let a word naming it skip the full check.
func TestCredHintsCoverCredentials(t *testing.T) {
	t.Parallel()
	for _, c := range credentials() {
		p := "/home/u/" + strings.Join(c, "/")
		if !credHint(p) {
			t.Errorf("%s: no credHint matches it", p)
		}
	}
}
