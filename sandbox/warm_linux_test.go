//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestHold: while Hold holds the executor's setup back, a command still
// runs at once (it needs the state, so it builds it) and its credential
// files are masked as ever; Close releases a held setup without building
// it; released, the setup is built without a command; and a setup that
// fails is the first command's error, the next command building again.
func TestHold(t *testing.T) {
	const secret = "sk-live-hold-5e6f7a8b"
	rsTemps := func(t *testing.T, dir string) int {
		t.Helper()
		got, err := filepath.Glob(filepath.Join(dir, "rein-sandbox-*"))
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	t.Run("held: a command builds and is masked", func(t *testing.T) {
		l, work := newLandlock(t, &sandbox.Landlock{Hold: make(chan struct{})})
		if err := os.WriteFile(filepath.Join(work, ".env"), []byte("TOKEN="+secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := l.Prepare(t.Context()); err != nil {
			t.Fatal(err)
		}
		l.Warm(t.Context()) // held too: the command starts the zygote
		res, err := l.Exec(t.Context(), sandbox.Cmd{Script: "cat .env 2>&1; echo done", Dir: work, Timeout: time.Minute})
		if err != nil || !strings.Contains(res.Stdout, "done") {
			t.Fatalf("Exec: %+v, %v", res, err)
		}
		if strings.Contains(res.Stdout+res.Stderr, secret) {
			t.Errorf("the credential file was readable on a held executor's first command:\n%s", res.Stdout)
		}
	})
	for _, c := range []struct {
		name    string
		release bool
		built   int // private temp dirs before Close
	}{
		{"held then closed: nothing built", false, 0},
		{"released: built without a command", true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			hold := make(chan struct{})
			l, _ := newLandlock(t, &sandbox.Landlock{Hold: hold, Stage: true})
			if err := l.Prepare(t.Context()); err != nil {
				t.Fatal(err)
			}
			if c.release {
				close(hold)
				_ = l.StageErr() // waits for the build
			}
			if n := rsTemps(t, tmp); n != c.built {
				t.Errorf("%d private temp dirs before Close, want %d", n, c.built)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if n := rsTemps(t, tmp); n != 0 {
				t.Errorf("%d private temp dirs left after Close", n)
			}
		})
	}
	t.Run("a failed setup is the first command's error", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "not-yet")
		t.Setenv("TMPDIR", missing)
		l, work := newLandlock(t, &sandbox.Landlock{})
		if err := l.Prepare(t.Context()); err != nil {
			t.Fatalf("Prepare checks what can be refused, not the temp dir: %v", err)
		}
		_, err := l.Exec(t.Context(), sandbox.Cmd{Script: "true", Dir: work, Timeout: time.Minute})
		if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "temp dir") {
			t.Fatalf("first command: %v, want ErrStart about the temp dir", err)
		}
		if err := os.Mkdir(missing, 0o700); err != nil {
			t.Fatal(err)
		}
		if res, err := l.Exec(t.Context(), sandbox.Cmd{Script: "echo ok", Dir: work, Timeout: time.Minute}); err != nil || res.Stdout != "ok\n" {
			t.Fatalf("the next command did not build again: %+v, %v", res, err)
		}
	})
}
