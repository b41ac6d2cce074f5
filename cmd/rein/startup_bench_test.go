package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStartup is issue 18's start-up measurement: the CPU time (user +
// system) of `rein run` from exec to its first model request, against a Go
// program that only sends such a request (testdata/startbase), run in turn
// so both see the same machine. Each run's model is a local server that
// kills the process the moment the request arrives; the CPU time is the
// kernel's account of the killed process (all its threads). rein runs
// with its defaults (every built-in tool, the strongest sandbox that
// works: its executor is opened before the first request) and the OpenAI
// provider, as `rein run --model openai:... --base-url URL` does.
//
//	go test -run '^$' -bench Startup -benchtime 20x ./cmd/rein
//
// The figures are medians: rein-cpu-ms, base-cpu-ms and ratio (rein/base,
// pair by pair).
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	rein, base := filepath.Join(dir, "rein"), filepath.Join(dir, "startbase")
	for _, p := range [][]string{{rein, "."}, {base, "./testdata/startbase"}} {
		if out, err := exec.CommandContext(b.Context(), "go", "build", "-o", p[0], p[1]).CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", p[1], err, out)
		}
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	var reinCPU, baseCPU, ratio []float64
	for b.Loop() {
		bc := untilFirstRequest(b, env, base)
		rc := untilFirstRequest(b, env, rein, "run", "--workdir", work, "--model", "openai:gpt-4o-mini",
			"--audit-dir", filepath.Join(dir, "audit"), "--base-url")
		baseCPU, reinCPU, ratio = append(baseCPU, bc), append(reinCPU, rc), append(ratio, rc/bc)
	}
	b.ReportMetric(median(reinCPU), "rein-cpu-ms")
	b.ReportMetric(median(baseCPU), "base-cpu-ms")
	b.ReportMetric(median(ratio), "ratio")
}

// untilFirstRequest runs name with args and, last, the URL of a model
// server that kills it when its first request arrives, and returns the
// CPU milliseconds the process used until then.
func untilFirstRequest(b *testing.B, env []string, name string, args ...string) float64 {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	started := make(chan *os.Process, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := <-started
		started <- p
		_ = p.Signal(syscall.SIGKILL)
	}))
	defer srv.Close()
	cmd := exec.CommandContext(ctx, name, append(args, srv.URL+"/v1/", "What is 2+3?")...)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	started <- cmd.Process
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL || ctx.Err() != nil {
		b.Fatalf("%s did not reach its first model request: %v", name, err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
