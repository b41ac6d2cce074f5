package permission_test

import (
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/gate/shell"
)

// TestRulesReadTheShellGatesAnalysis: a command rule is matched against the
// analysis the shell gate made of the call's parse, not against a parse of
// the text of its own. The test changes the shared tree (which no gate may
// do) to tell the two apart: the text says "go test", the tree "curl".
func TestRulesReadTheShellGatesAnalysis(t *testing.T) {
	t.Parallel()
	o := opts(t)
	g, err := permission.NewGate(permission.Default, []permission.Rule{{Tool: "run_bash", Decision: "allow", Command: "go test"}}, o)
	if err != nil {
		t.Fatal(err)
	}
	plain := call(runBash, `{"command":"go test ./..."}`)
	if v := g.Check(t.Context(), plain); v.Decision != gate.Allow {
		t.Fatalf("go test: %+v", v)
	}

	c := call(runBash, `{"command":"go test ./..."}`)
	c.Commands()[0].File.Stmts[0].Cmd.(*syntax.CallExpr).Args[0].Parts[0].(*syntax.Lit).Value = "curl"
	shell.NewGate(o).Check(t.Context(), c)
	if v := g.Check(t.Context(), c); v.Decision == gate.Allow {
		t.Fatalf("the rule matched the text, not the analysis of the call's parse: %+v", v)
	}
}

// TestRulesAnalyseNothingAgain: after the shell gate, the permission gate's
// command rules cost no analysis: they allocate far less than on a call
// the shell gate has not seen.
func TestRulesAnalyseNothingAgain(t *testing.T) {
	o := opts(t)
	g, err := permission.NewGate(permission.Default, []permission.Rule{{Tool: "run_bash", Decision: "ask", Command: "git push"}}, o)
	if err != nil {
		t.Fatal(err)
	}
	sh := shell.NewGate(o)
	const line = `{"command":"cd sub && go vet ./... && go test -run TestX ./pkg/... | tee out.txt"}`
	allocs := func(shellFirst, perm bool) float64 {
		return testing.AllocsPerRun(50, func() {
			c := call(runBash, line)
			c.Commands()
			if shellFirst {
				sh.Check(t.Context(), c)
			}
			if perm {
				g.Check(t.Context(), c)
			}
		})
	}
	afterShell := allocs(true, true) - allocs(true, false)
	alone := allocs(false, true) - allocs(false, false)
	if afterShell*2 >= alone {
		t.Fatalf("the permission gate allocates %.0f times after the shell gate, %.0f without it: it analysed again", afterShell, alone)
	}
}
