package shell

import (
	"runtime"
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

// BenchmarkLatency times each corpus command on its own and reports the
// p50, p99 and max of the per-command best times as metrics (p50-ns,
// p99-ns, max-ns), so benchstat can compare them across runs; -v logs the
// slowest commands. It was a test that only logged and could not fail;
// timing belongs in a benchmark. The per-command mean is lower than
// BenchmarkAnalyze's, which counts garbage collection.
// Run: go test -run '^$' -bench Latency -count 5 ./gate/shell
func BenchmarkLatency(b *testing.B) {
	cmds := corpusCommands(b)
	g := NewGate(Options{WorkDir: "/work/proj", Home: fakeHome})
	// each command: the best of 5 batches of 20 runs, so that a pause of the
	// machine (GC, other processes) is not counted against one command
	const batches, reps = 5, 20
	type sample struct {
		d   time.Duration
		cmd string
	}
	var samples []sample
	for b.Loop() {
		samples = samples[:0]
		for _, c := range cmds {
			best := time.Duration(1 << 62)
			for range batches {
				start := time.Now()
				for range reps {
					g.Analyze(c)
				}
				best = min(best, time.Since(start)/reps)
			}
			samples = append(samples, sample{best, c})
		}
	}
	slices.SortFunc(samples, func(x, y sample) int { return int(x.d - y.d) })
	at := func(q float64) time.Duration { return samples[int(q*float64(len(samples)-1))].d }
	b.ReportMetric(float64(at(0.5).Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(at(0.99).Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(at(1).Nanoseconds()), "max-ns")
	for _, s := range samples[max(0, len(samples)-5):] {
		b.Logf("slow: %v %q", s.d, clip(s.cmd))
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

// BenchmarkGateOverParse reports the gate's cost as a multiple of parsing
// the same commands alone (metric x-parse, the median over the iterations),
// timed by the thread's CPU clock (on Linux), so that time spent waiting
// for a CPU on a loaded machine is not counted. Each iteration parses the
// whole corpus and judges it with the gate, in alternating order, so that
// what load still costs (caches) falls on both alike; separate runs of
// BenchmarkAnalyze/gate and BenchmarkParseOnly do not share it, and their
// ratio swings with the machine's load.
// Run: go test -run '^$' -bench GateOverParse -count 3 ./gate/shell
func BenchmarkGateOverParse(b *testing.B) {
	cmds := corpusCommands(b)
	g := NewGate(Options{WorkDir: "/work/proj", Home: fakeHome})
	p := newParser()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	parse := func() time.Duration {
		start := threadClock()
		for _, c := range cmds {
			_, _ = p.Parse(strings.NewReader(c), "")
		}
		return threadClock() - start
	}
	judge := func() time.Duration {
		start := threadClock()
		for _, c := range cmds {
			g.Analyze(c)
		}
		return threadClock() - start
	}
	var ratios []float64
	for b.Loop() {
		var tp, tg time.Duration
		if len(ratios)%2 == 0 {
			tp, tg = parse(), judge()
		} else {
			tg, tp = judge(), parse()
		}
		ratios = append(ratios, float64(tg)/float64(tp))
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "x-parse")
}
