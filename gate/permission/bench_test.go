package permission_test

import (
	"testing"

	"github.com/reinhq/rein/gate/permission"
)

// BenchmarkRules judges shell commands against a project's typical command
// rules: the cost a rule set adds to every run_bash call.
//
//	go test -run '^$' -bench Rules -benchmem -count 6 ./gate/permission
func BenchmarkRules(b *testing.B) {
	rules := []permission.Rule{
		{Tool: "run_bash", Decision: "allow", Command: "go test"},
		{Tool: "run_bash", Decision: "allow", Command: "go vet"},
		{Tool: "run_bash", Decision: "allow", Command: "git status"},
		{Tool: "run_bash", Decision: "allow", Command: "git diff"},
		{Tool: "run_bash", Decision: "ask", Command: "make"},
		{Tool: "run_bash", Decision: "deny", Command: "git push"},
		{Tool: "write_file", Decision: "allow", Path: "docs/**"},
	}
	g, err := permission.NewGate(permission.Default, rules, opts(b))
	if err != nil {
		b.Fatal(err)
	}
	calls := []string{
		`{"command":"go test ./..."}`,
		`{"command":"git status --short && git diff HEAD~1 -- docs"}`,
		`{"command":"cd sub && make -j4 test | tee out.txt"}`,
		`{"command":"grep -rn TODO . | sort | head -20"}`,
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g.Check(b.Context(), call(runBash, calls[i%len(calls)]))
	}
}
