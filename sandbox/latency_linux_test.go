//go:build linux

package sandbox_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// BenchmarkAbortLatency measures the abort path: from cancelling the
// context of a running `sleep 30` to Exec returning (ns/op) and to the
// sleep being dead (p50-ns, p99-ns, max-ns of the runs). Setting up each run
// is not timed. Run it with a fixed count:
//
//	go test -run '^$' -bench AbortLatency -benchtime 50x ./sandbox
func BenchmarkAbortLatency(b *testing.B) {
	l := &sandbox.Local{}
	gone := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.StopTimer()
	for range b.N {
		ctx, cancel := context.WithCancel(b.Context())
		ps, out := startBlocked(b, ctx, l, `echo $$ > "$READY.tmp"; mv "$READY.tmp" "$READY"; exec sleep 30`)
		b.StartTimer()
		start := time.Now()
		cancel()
		<-out
		b.StopTimer()
		for !isGone(ps[0]) {
			if time.Since(start) > 5*time.Second {
				b.Fatalf("sleep %d alive 5 s after cancel", ps[0])
			}
		}
		gone = append(gone, time.Since(start))
	}
	slices.Sort(gone)
	q := func(f float64) float64 { return float64(gone[int(f*float64(len(gone)-1))].Nanoseconds()) }
	b.ReportMetric(q(.5), "p50-ns")
	b.ReportMetric(q(.99), "p99-ns")
	b.ReportMetric(q(1), "max-ns")
}

func BenchmarkExecTrue(b *testing.B) {
	l := &sandbox.Local{}
	c := sandbox.Cmd{Script: "true", Dir: b.TempDir()}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Exec(b.Context(), c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecOutput1MiB(b *testing.B) {
	l := &sandbox.Local{}
	c := sandbox.Cmd{Script: "head -c 1048576 /dev/zero", Dir: b.TempDir()}
	b.ReportAllocs()
	b.SetBytes(1 << 20)
	for b.Loop() {
		if _, err := l.Exec(b.Context(), c); err != nil {
			b.Fatal(err)
		}
	}
}
