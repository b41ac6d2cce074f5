package deps

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/testenv"
)

// module is rein's module path; rules name packages relative to it.
const module = "github.com/reinhq/rein"

// A rule says what the packages matching Pkgs may depend on, directly or
// through other packages (what `go list -deps` lists). Only rein's own
// packages are judged: the standard library and third-party modules (the
// providers' SDKs, the TOML reader) are always allowed.
//
// Patterns are paths inside the module; "x/..." matches x and every
// package below it.
type rule struct {
	Pkgs string
	// Only, when set, lists all the rein packages the matching packages
	// may depend on; any other is a violation. A package may always use
	// itself. An empty, non-nil Only means a leaf: no rein package at all.
	Only []string
	// Not lists rein packages the matching packages may not depend on,
	// except those in Except.
	Not    []string
	Except []string
	// Direct judges only what the packages import themselves, not what
	// their imports bring in (a rule about who may use a package that
	// others use on their behalf).
	Direct bool
	// Why is said when the rule is broken.
	Why string
}

// rules are rein's import rules (issue 16, DESIGN.md "Packages").
var rules = []rule{
	{Pkgs: "model/...", Only: []string{"model", "model/internal/wire", "model/jsonx"},
		Why: "a provider sits below the loop: it imports only package model (and its SDK); model/jsonx (strict JSON) and model/internal/wire (what a server sent, for errors) are stdlib-only leaves"},
	{Pkgs: "config", Not: []string{"model/..."}, Except: []string{"model", "model/jsonx"},
		Why: "config reads prices from package price, never from a provider"},
	{Pkgs: "tool/...", Not: []string{"gate", "gate/..."},
		Why: "a tool is judged by the gates and knows none of them; the guarded network is netguard"},
	{Pkgs: "gate/...", Not: []string{"tool/..."}, Except: []string{"tool", "tool/schema"},
		Why: "a gate judges any tool through package tool (its spec and argument roles), never a tool implementation"},
	{Pkgs: "internal/harness", Not: []string{"eval", "eval/..."},
		Why: "the eval suites build on the assembly, not the other way round; numbers are read with internal/numread"},
	{Pkgs: "agent", Not: []string{"agent/guarded", "internal/harness"},
		Why: "the loop sits below the guarded assembly: agent/guarded builds on agent, never the other way round"},
	{Pkgs: "agent/guarded", Not: []string{"eval", "eval/...", "demo", "demo/...", "cmd/...", "tool/desk", "tool/bank"},
		Why: "the public guarded builder is what an embedder gets: no CLI, demo or eval code, and no demo tools (they come in as caller-supplied tools)"},
	{Pkgs: "cmd/...", Direct: true, Not: []string{"internal/harness"},
		Why: "the CLI builds every session (run, chat, resume, demo) and judges calls (policy check) with the public builder agent/guarded, as an embedder does"},
	{Pkgs: "demo/...", Direct: true, Not: []string{"internal/harness"},
		Why: "the demos run through the public builder agent/guarded, with their own tools"},
	{Pkgs: "eval/...", Direct: true, Not: []string{"internal/harness"},
		Why: "the eval's full configuration is the public builder's pipeline (guarded.Pipeline)"},
	{Pkgs: "price", Only: []string{},
		Why: "price is the one price table: a leaf that config, the CLI and anything else may use"},
	{Pkgs: "agent/stop", Only: []string{},
		Why: "the stop reasons are a leaf that the loop and the audit log share"},
	{Pkgs: "audit", Not: []string{"agent", "agent/guarded", "internal/..."}, Except: []string{"internal/linkcheck", "internal/termsafe", "internal/statedir"},
		Why: "the audit log sits below the loop: it types its records with the gates', tools' and stop package's values, never the loop's"},
	{Pkgs: "cmd/rein-helper", Only: []string{"sandbox", "protect", "secret"},
		Why: "the sandbox helper is started for every confined command: it links the sandbox alone, so its start pays no other package's initialisation"},
	{Pkgs: "netguard", Only: []string{},
		Why: "netguard is the guarded network below the gates and the tools: it uses nothing above it"},
}

// match reports whether the module-relative path p matches pattern.
func match(pattern, p string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

func matchAny(patterns []string, p string) bool {
	return slices.ContainsFunc(patterns, func(q string) bool { return match(q, p) })
}

// check returns every violation of rules in graph, which maps each
// package (module-relative) to the rein packages it depends on, and
// direct, which maps it to those it imports itself.
func check(rules []rule, graph, direct map[string][]string) []string {
	var out []string
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, r := range rules {
		for _, p := range pkgs {
			if !match(r.Pkgs, p) {
				continue
			}
			deps := graph[p]
			if r.Direct {
				deps = direct[p]
			}
			for _, d := range deps {
				bad := false
				switch {
				case d == p:
				case r.Only != nil:
					bad = !matchAny(r.Only, d)
				default:
					bad = matchAny(r.Not, d) && !matchAny(r.Except, d)
				}
				if bad {
					out = append(out, fmt.Sprintf("%s depends on %s, which rule %q forbids: %s", p, d, r.Pkgs, r.Why))
				}
			}
		}
	}
	return out
}

// importGraph runs `go list` over the module and returns each rein
// package's rein dependencies, module-relative: all of them (graph), and
// those it imports itself (direct).
func importGraph(t *testing.T) (graph, direct map[string][]string) {
	t.Helper()
	gobin, err := exec.LookPath("go") // go test puts its own go first on PATH
	testenv.Need(t, "go", err)
	cmd := exec.CommandContext(t.Context(), gobin, "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}} |{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return ".", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	graph, direct = map[string][]string{}, map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		p, ok := rel(f[0])
		if !ok {
			continue
		}
		bar := slices.Index(f, "|")
		if bar < 0 {
			t.Fatalf("go list line without its imports: %q", sc.Text())
		}
		graph[p], direct[p] = reinOnly(f[1:bar], rel), reinOnly(f[bar+1:], rel)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return graph, direct
}

// reinOnly returns the rein packages of pkgs, module-relative.
func reinOnly(pkgs []string, rel func(string) (string, bool)) []string {
	out := []string{}
	for _, d := range pkgs {
		if r, ok := rel(d); ok {
			out = append(out, r)
		}
	}
	return out
}

// TestImportRules holds the rules over the real tree.
func TestImportRules(t *testing.T) {
	graph, direct := importGraph(t)
	for _, r := range rules {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(graph)), func(p string) bool { return match(r.Pkgs, p) }) {
			t.Errorf("rule %q matches no package: fix the rule after a move", r.Pkgs)
		}
	}
	for _, v := range check(rules, graph, direct) {
		t.Error(v)
	}
}

// TestRulesCatch: each rule refuses the import it exists to refuse, and
// lets through what it allows, over a made-up graph.
func TestRulesCatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		graph map[string][]string
		bad   int
	}{
		{"a provider above the loop", map[string][]string{"model/anthropic": {"model", "computer", "agent"}}, 2},
		{"a provider with model and jsonx", map[string][]string{"model/scripted": {"model", "model/jsonx"}}, 0},
		{"config reaching a provider", map[string][]string{"config": {"model", "model/openai", "price"}}, 1},
		{"a tool importing a gate", map[string][]string{"tool/web": {"tool", "gate/network", "netguard"}}, 1},
		{"a tool importing the pipeline", map[string][]string{"tool/fs": {"tool", "gate"}}, 1},
		{"a gate importing a tool implementation", map[string][]string{"gate/network": {"gate", "tool", "tool/schema", "tool/web"}}, 1},
		{"the assembly importing eval", map[string][]string{"internal/harness": {"agent", "eval", "internal/numread"}}, 1},
		{"price importing anything of rein's", map[string][]string{"price": {"model"}}, 1},
		{"netguard importing the gate above it", map[string][]string{"netguard": {"gate/network"}}, 1},
		{"a package outside every rule", map[string][]string{"agent": {"gate", "tool/fs", "model/anthropic"}}, 0},
		{"the builder importing a demo", map[string][]string{"agent/guarded": {"internal/harness", "demo"}}, 1},
	} {
		if got := check(rules, c.graph, c.graph); len(got) != c.bad {
			t.Errorf("%s: %d violations, want %d: %q", c.name, len(got), c.bad, got)
		}
	}
	// The direct rules: importing the assembly itself is refused, using it
	// through the builder is not.
	for _, c := range []struct {
		name          string
		graph, direct map[string][]string
		bad           int
	}{
		{"the CLI importing the assembly", map[string][]string{"cmd/rein": {"agent/guarded", "internal/harness"}},
			map[string][]string{"cmd/rein": {"agent/guarded", "internal/harness"}}, 1},
		{"the CLI through the builder", map[string][]string{"cmd/rein": {"agent/guarded", "internal/harness"}},
			map[string][]string{"cmd/rein": {"agent/guarded"}}, 0},
		{"a demo importing the assembly", map[string][]string{"demo": {"internal/harness"}},
			map[string][]string{"demo": {"internal/harness"}}, 1},
		{"an eval suite importing the assembly", map[string][]string{"eval/scenario": {"agent/guarded", "internal/harness"}},
			map[string][]string{"eval/scenario": {"internal/harness"}}, 1},
	} {
		if got := check(rules, c.graph, c.direct); len(got) != c.bad {
			t.Errorf("%s: %d violations, want %d: %q", c.name, len(got), c.bad, got)
		}
	}
}
