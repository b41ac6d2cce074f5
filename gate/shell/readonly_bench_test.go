package shell_test

import (
	"testing"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/shell"
)

// BenchmarkReadOnlyProof measures the read-only proof against the analysis
// it follows, over the read-only corpus, in a repository whose git config
// is read for every git and go line: "parse" makes the call and parses its
// line, "analysis" adds Analyzer.Call, "analysis+proof" adds
// Analyzer.ReadOnly, and "proof" is ProveReadOnly alone on parsed lines
// (no git config read). What the proof adds per command is the difference
// of the last two full runs (docs/BENCHMARKS.md).
func BenchmarkReadOnlyProof(b *testing.B) {
	read := loadLines(b, "read.txt")
	z := shell.NewAnalyzer(shell.Options{WorkDir: repoDir(b, ""), Exec: shell.Executor{Sandboxed: true}, ExecTool: "run_bash"})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			bashCall(read[i%len(read)]).Commands()
		}
	})
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
	b.Run("proof", func(b *testing.B) {
		calls := make([]*gate.Call, len(read))
		for i, cmd := range read {
			calls[i] = bashCall(cmd)
			calls[i].Commands()
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_ = shell.ProveReadOnly(calls[i%len(calls)].Commands()[0].File)
		}
	})
}
