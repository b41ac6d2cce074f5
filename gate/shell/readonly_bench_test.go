package shell_test

import (
	"testing"

	"github.com/reinhq/rein/gate/shell"
)

// BenchmarkReadOnlyProof measures the read-only proof against the analysis
// it follows, over the read-only corpus, in a repository whose git config
// is read for every git and go line: "analysis" is Analyzer.Call alone,
// "analysis+proof" is Analyzer.Call then Analyzer.ReadOnly. The ratio of
// the two is what the proof adds per command (docs/BENCHMARKS.md).
func BenchmarkReadOnlyProof(b *testing.B) {
	read := loadLines(b, "read.txt")
	z := shell.NewAnalyzer(shell.Options{WorkDir: repoDir(b, ""), Exec: shell.Executor{Sandboxed: true}, ExecTool: "run_bash"})
	b.Run("analysis", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			z.Call(bashCall(read[i%len(read)]))
		}
	})
	b.Run("analysis+proof", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c := bashCall(read[i%len(read)])
			z.Call(c)
			z.ReadOnly(c)
		}
	})
}
