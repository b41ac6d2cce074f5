//go:build unix

package harness_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/tool"
)

// BenchmarkPipeline judges the corpora of testdata/corpus through the whole
// gate pipeline of a session in bypass mode (every gate runs; nothing is
// asked), one call per iteration, cycling through the corpus. ns/op is the
// mean per call. Per command: each command's median time over its
// repetitions, then the p50 and p99 of those medians across the corpus
// (cmd-p50-ns, cmd-p99-ns): how long the slow commands take, without the
// garbage collector's pauses, which land on whichever call is running.
// gates=schema-only is the baseline in the same process: the allowlist and
// the JSON Schema alone, which is what a harness without rein's hard gates
// does on every call. cpu-ns/op is the process's CPU time (user and
// system, all threads, the garbage collector's included) per call: on a
// machine shared with other work it moves far less than ns/op, whose
// wall-clock time counts the moments another process held the CPU.
//
//	go test -run '^$' -bench Pipeline -benchmem ./internal/harness
func BenchmarkPipeline(b *testing.B) {
	for _, c := range []struct {
		name  string
		calls func(tb testing.TB, work string) []gate.Call
	}{
		{"shell", shellCalls},
		{"url", urlCalls},
		{"path", pathCalls},
	} {
		for _, full := range []bool{true, false} {
			name := "corpus=" + c.name + "/gates=full"
			if !full {
				name = "corpus=" + c.name + "/gates=schema-only"
			}
			b.Run(name, func(b *testing.B) {
				work, reg, p := benchSession(b)
				if !full { // the baseline: allowlist and schema, what any harness does
					p = gate.NewPipeline(nil, gate.NewAvailability(reg.Names()), gate.Validation{})
				}
				calls := c.calls(b, work)
				for i := range calls {
					calls[i].Tool, _ = reg.Lookup(calls[i].Name)
				}
				took := make([][]time.Duration, len(calls))
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuTime(b)
				for i := 0; b.Loop(); i++ {
					k := i % len(calls)
					c := calls[k] // a fresh copy: Call caches its decoded arguments
					start := time.Now()
					p.Evaluate(b.Context(), &c)
					took[k] = append(took[k], time.Since(start))
				}
				b.StopTimer()
				b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
				var medians []time.Duration
				for _, t := range took {
					if len(t) > 0 {
						slices.Sort(t)
						medians = append(medians, t[len(t)/2])
					}
				}
				if len(medians) == len(calls) {
					slices.Sort(medians)
					b.ReportMetric(float64(medians[len(medians)/2].Nanoseconds()), "cmd-p50-ns")
					b.ReportMetric(float64(medians[len(medians)*99/100].Nanoseconds()), "cmd-p99-ns")
				}
			})
		}
	}
}

// cpuTime is the CPU time the process has used so far, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func corpusFile(tb testing.TB, name string) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

func mkCall(name string, args any) gate.Call {
	b, _ := json.Marshal(args)
	return gate.Call{ID: "bench", Name: name, Args: b}
}

func shellCalls(tb testing.TB, _ string) []gate.Call {
	var calls []gate.Call
	for _, f := range []string{"shell-dangerous.jsonl", "shell-benign.jsonl"} {
		for line := range strings.Lines(corpusFile(tb, f)) {
			var l struct {
				Command string `json:"command"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Command != "" {
				calls = append(calls, mkCall("run_bash", map[string]string{"command": l.Command}))
			}
		}
	}
	return calls
}

func urlCalls(tb testing.TB, _ string) []gate.Call {
	var calls []gate.Call
	for _, f := range []string{"url-internal.txt", "url-public.txt"} {
		for line := range strings.Lines(corpusFile(tb, f)) {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				calls = append(calls, mkCall("webfetch", map[string]string{"url": line}))
			}
		}
	}
	return calls
}

func pathCalls(tb testing.TB, work string) []gate.Call {
	repl := strings.NewReplacer("$OUTSIDE", "/tmp/outside", "$WORK_ALIAS", work, "$WORK", work)
	var calls []gate.Call
	for line := range strings.Lines(corpusFile(tb, "path-escapes.jsonl")) {
		var l struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Tool != "" {
			calls = append(calls, gate.Call{ID: "bench", Name: l.Tool, Args: json.RawMessage(repl.Replace(string(l.Args)))})
		}
	}
	// And the everyday case: paths that exist inside the work dir.
	for _, p := range []string{"sub", "sub/new.txt", "README.md", "./sub/../sub"} {
		calls = append(calls, mkCall("read_file", map[string]string{"path": p}))
	}
	return calls
}

// benchSession makes a work dir (with a sub directory) and the session's
// tools and gates on it, in bypass mode: nothing is asked.
func benchSession(b *testing.B) (work string, reg *tool.Registry, p *gate.Pipeline) {
	b.Helper()
	work, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(work, "sub"), 0o755); err != nil {
		b.Fatal(err)
	}
	net := &netguard.Policy{}
	reg = workTools(b, work, net)
	p, err = harness.Gates(harness.Policy{Allowed: reg.Names(), Mode: permission.Bypass}, work, net)
	if err != nil {
		b.Fatal(err)
	}
	return work, reg, p
}

// workTools returns the session's built-in tools rooted at dir (the root
// closed when the test ends), with net as webfetch's network policy.
func workTools(tb testing.TB, dir string, net *netguard.Policy) *tool.Registry {
	tb.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { root.Close() })
	reg, err := harness.Tools(harness.Env{Root: root, WorkDir: dir, Net: net})
	if err != nil {
		tb.Fatal(err)
	}
	return reg
}
