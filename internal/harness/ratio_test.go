//go:build unix

package harness_test

import (
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gate/cmdline"
)

// BenchmarkPipelineVsParse is issue 16's measure: the whole gate pipeline
// of a session (bypass mode: every gate runs, nothing is asked) on a shell
// corpus command against parsing the same command with mvdan.cc/sh alone,
// timed alternately in one loop so that a shared machine's load falls on
// both alike. pipeline/parse is the ratio of the two totals; the target is
// 3 or less.
//
//	go test -run '^$' -bench PipelineVsParse -count 3 ./internal/harness
func BenchmarkPipelineVsParse(b *testing.B) {
	work, reg, p := benchSession(b)
	calls := shellCalls(b, work)
	srcs := make([]string, len(calls))
	for i := range calls {
		calls[i].Tool, _ = reg.Lookup(calls[i].Name)
		srcs[i], _ = calls[i].Str("command")
	}
	parser := cmdline.NewParser()
	var parse, pipeline time.Duration
	for i := 0; b.Loop(); i++ {
		k := i % len(calls)
		t0 := time.Now()
		_, _ = parser.Parse(strings.NewReader(srcs[k]), "")
		t1 := time.Now()
		c := calls[k] // a fresh copy: Call caches its views
		p.Evaluate(b.Context(), &c)
		pipeline += time.Since(t1)
		parse += t1.Sub(t0)
	}
	b.ReportMetric(float64(pipeline)/float64(parse), "pipeline/parse")
	b.ReportMetric(float64(parse.Nanoseconds())/float64(b.N), "parse-ns/op")
	b.ReportMetric(float64(pipeline.Nanoseconds())/float64(b.N), "pipeline-ns/op")
}
