package shell

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func corpusCommands(tb testing.TB) []string {
	var cmds []string
	for _, name := range []string{"shell-dangerous.jsonl", "shell-benign.jsonl"} {
		for _, e := range loadCorpus(tb, name) {
			cmds = append(cmds, e.Command)
		}
	}
	return cmds
}

// BenchmarkAnalyze analyzes the corpus, one command per op, so ns/op is
// the mean time per command.
func BenchmarkAnalyze(b *testing.B) {
	cmds := corpusCommands(b)
	o := Options{WorkDir: "/work/proj", Home: fakeHome}
	b.Run("gate", func(b *testing.B) {
		g := NewGate(o)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			g.Analyze(cmds[i%len(cmds)])
			i++
		}
	})
	b.Run("fresh-parser", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			Analyze(cmds[i%len(cmds)], o)
			i++
		}
	})
}

// TestLatencyReport times each corpus command on its own and logs the mean,
// p50, p99 and the slowest commands. It only logs; timing is not asserted.
// The mean here is of per-command best times, so it is lower than
// BenchmarkAnalyze's, which counts garbage collection.
// Run: go test -run TestLatencyReport -v ./gate/shell
func TestLatencyReport(t *testing.T) {
	if testing.Short() {
		t.Skip("timing report")
	}
	cmds := corpusCommands(t)
	g := NewGate(Options{WorkDir: "/work/proj", Home: fakeHome})
	// each command: the best of 5 batches of 20 runs, so that a pause of the
	// machine (GC, other processes) is not counted against one command
	const batches, reps = 5, 20
	type sample struct {
		d   time.Duration
		cmd string
	}
	samples := make([]sample, 0, len(cmds))
	var total time.Duration
	for _, c := range cmds {
		best := time.Duration(1 << 62)
		for range batches {
			start := time.Now()
			for range reps {
				g.Analyze(c)
			}
			best = min(best, time.Since(start)/reps)
		}
		total += best
		samples = append(samples, sample{best, c})
	}
	slices.SortFunc(samples, func(x, y sample) int { return int(x.d - y.d) })
	at := func(q float64) time.Duration { return samples[int(q*float64(len(samples)-1))].d }
	t.Logf("%d commands: mean %v, p50 %v, p99 %v, max %v", len(samples), total/time.Duration(len(samples)), at(0.5), at(0.99), at(1))
	for _, s := range samples[max(0, len(samples)-5):] {
		t.Logf("slow: %v %q", s.d, clip(s.cmd))
	}
}

// BenchmarkParseOnly is the floor: parsing the corpus without judging.
func BenchmarkParseOnly(b *testing.B) {
	cmds := corpusCommands(b)
	p := newParser()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_, _ = p.Parse(strings.NewReader(cmds[i%len(cmds)]), "")
		i++
	}
}
