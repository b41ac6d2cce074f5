//go:build linux

package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// TestWarm: a warmed executor runs its commands as a cold one does, and
// one closed while its zygote is still starting closes cleanly and then
// refuses commands; Warm on a one-command executor does nothing.
func TestWarm(t *testing.T) {
	t.Run("warm then run", func(t *testing.T) {
		l, work := newLandlock(t, &sandbox.Landlock{})
		if err := l.Prepare(t.Context()); err != nil {
			t.Fatal(err)
		}
		l.Warm(t.Context())
		for range 2 {
			res, err := l.Exec(t.Context(), sandbox.Cmd{Script: "echo ok", Dir: work})
			if err != nil || res.Stdout != "ok\n" {
				t.Fatalf("Exec: %+v, %v", res, err)
			}
		}
	})
	t.Run("closed while warming", func(t *testing.T) {
		l, work := newLandlock(t, &sandbox.Landlock{})
		if err := l.Prepare(t.Context()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		l.Warm(ctx)
		cancel()
		if err := l.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if _, err := l.Exec(t.Context(), sandbox.Cmd{Script: "true", Dir: work}); err == nil {
			t.Fatal("a closed executor ran a command")
		}
	})
	t.Run("per command: nothing to warm", func(t *testing.T) {
		l, work := newLandlock(t, &sandbox.Landlock{PerCommand: true})
		l.Warm(t.Context())
		if res, err := l.Exec(t.Context(), sandbox.Cmd{Script: "echo ok", Dir: work}); err != nil || res.Stdout != "ok\n" {
			t.Fatalf("Exec: %+v, %v", res, err)
		}
	})
}

// BenchmarkFirstCommand prices a session's first command against a later
// one, as a session pays them: the executor opens, the model thinks
// (300 ms, untimed) before its first command, and again (100 ms) before
// the second. warm=off starts the zygote at the first command; warm=on
// starts it when the executor opens (the CLI's run and chat). The metric
// first/later is the target (≤ 2).
//
//	go test -run '^$' -bench FirstCommand -benchtime 10x ./sandbox
func BenchmarkFirstCommand(b *testing.B) {
	for _, warm := range []bool{false, true} {
		name := "warm=off"
		if warm {
			name = "warm=on"
		}
		b.Run(name, func(b *testing.B) {
			needLandlock(b)
			var first, later time.Duration
			for b.Loop() {
				b.StopTimer()
				work := b.TempDir()
				l := &sandbox.Landlock{WorkDir: work, Stage: true}
				if err := l.Prepare(b.Context()); err != nil {
					b.Fatal(err)
				}
				if warm {
					l.Warm(b.Context())
				}
				time.Sleep(300 * time.Millisecond)
				for i := range 2 {
					if i == 1 {
						time.Sleep(100 * time.Millisecond)
					}
					start := time.Now()
					b.StartTimer()
					res, err := l.Exec(b.Context(), sandbox.Cmd{Script: "true", Dir: work})
					b.StopTimer()
					if err != nil {
						b.Fatal(err)
					}
					if res.Staged != nil {
						_ = res.Staged.Discard()
					}
					if i == 0 {
						first += time.Since(start)
					} else {
						later += time.Since(start)
					}
				}
				_ = l.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(first.Microseconds())/float64(b.N)/1000, "first-ms")
			b.ReportMetric(float64(later.Microseconds())/float64(b.N)/1000, "later-ms")
			b.ReportMetric(float64(first)/float64(later), "first/later")
		})
	}
}
