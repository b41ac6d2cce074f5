//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein/gate/cmdline"
	"github.com/reinhq/rein/sandbox"
)

// BenchmarkExec runs `true` back to back: bare (exec.Command, no shell),
// bare through bash, with Local, with Landlock (through its zygote; exec'd
// directly as rein runs a simple command, and through bash), with
// Landlock's helper per command (PerCommand, the path before the zygote),
// and with bubblewrap as codex runs it, to price the sandbox:
//
//	go test -run '^$' -bench 'Exec/backend' -benchtime 200x ./sandbox
func BenchmarkExec(b *testing.B) { benchBackends(b, 0) }

// BenchmarkExecSpaced is BenchmarkExec with 100 ms between commands (not
// timed), as a session spaces them with a model call between: what a
// kernel does lazily between commands (an RCU grace period, a cgroup's
// teardown) is paid here and hidden back to back.
//
//	go test -run '^$' -bench 'ExecSpaced/backend' -benchtime 30x ./sandbox
func BenchmarkExecSpaced(b *testing.B) { benchBackends(b, 100*time.Millisecond) }

func benchBackends(b *testing.B, gap time.Duration) {
	b.Run("backend=bare", func(b *testing.B) {
		benchCmd(b, gap, "true")
	})
	b.Run("backend=bare-bash", func(b *testing.B) {
		benchCmd(b, gap, "bash", "-c", "true")
	})
	b.Run("backend=bwrap", func(b *testing.B) {
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			b.Skip("no bwrap (apt-get install bubblewrap)")
		}
		work := b.TempDir()
		// codex's bubblewrap pipeline: read-only root, the work dir
		// writable, new session, dies with its parent, its own user, pid
		// and network namespaces and /proc.
		benchCmd(b, gap, bwrap, "--new-session", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev",
			"--bind", work, work, "--unshare-user", "--unshare-pid", "--unshare-net", "--proc", "/proc",
			"--chdir", work, "--", "bash", "-c", "true")
	})
	b.Run("backend=local", func(b *testing.B) {
		benchExec(b, gap, &sandbox.Local{}, b.TempDir())
	})
	b.Run("backend=local-reaper", func(b *testing.B) {
		benchExec(b, gap, &sandbox.Local{Helper: os.Args[0]}, b.TempDir())
	})
	b.Run("backend=landlock", func(b *testing.B) {
		// As rein runs it: a simple command such as `true` is exec'd
		// without the shell (Simple).
		l, work := newLandlock(b, &sandbox.Landlock{Simple: cmdline.Simple})
		benchExec(b, gap, l, work)
	})
	b.Run("backend=landlock-shell", func(b *testing.B) {
		// Every command through bash, as one that needs the shell runs.
		l, work := newLandlock(b, &sandbox.Landlock{})
		benchExec(b, gap, l, work)
	})
	b.Run("backend=landlock-percommand", func(b *testing.B) {
		l, work := newLandlock(b, &sandbox.Landlock{PerCommand: true})
		benchExec(b, gap, l, work)
	})
}

// pause waits gap outside the timing.
func pause(b *testing.B, gap time.Duration) {
	if gap > 0 {
		b.StopTimer()
		time.Sleep(gap)
		b.StartTimer()
	}
}

func benchCmd(b *testing.B, gap time.Duration, name string, args ...string) {
	if err := exec.Command(name, args...).Run(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		pause(b, gap)
		if err := exec.Command(name, args...).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchExec(b *testing.B, gap time.Duration, ex sandbox.Executor, dir string) {
	c := sandbox.Cmd{Script: "true", Dir: dir}
	if _, err := ex.Exec(b.Context(), c); err != nil { // set up outside the timing
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		pause(b, gap)
		res, err := ex.Exec(b.Context(), c)
		if err != nil || res.ExitCode != 0 {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkSpacedRatio is issue 18's spaced target as one interleaved
// run: each op runs `true` 100 ms after the last command, once with
// Landlock as rein runs it (simple commands exec'd directly), once
// through Landlock's shell, once bare through bash and once with
// bubblewrap as codex runs it, in a rotating order, and reports each
// one's median and the ratios (the targets: landlock/bwrap ≤ 0.35,
// landlock/bash ≤ 2). Interleaving keeps the ratios true when the
// machine's speed drifts.
//
//	go test -run '^$' -bench SpacedRatio -benchtime 40x ./sandbox
func BenchmarkSpacedRatio(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("no bwrap (apt-get install bubblewrap)")
	}
	direct, work := newLandlock(b, &sandbox.Landlock{Simple: cmdline.Simple})
	shell, shellWork := newLandlock(b, &sandbox.Landlock{})
	bw := b.TempDir()
	run := func(ex sandbox.Executor, dir string) func() error {
		return func() error {
			res, err := ex.Exec(b.Context(), sandbox.Cmd{Script: "true", Dir: dir})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
			}
			return err
		}
	}
	kinds := []struct {
		name string
		run  func() error
	}{
		{"landlock", run(direct, work)},
		{"landlock-shell", run(shell, shellWork)},
		{"bash", func() error { return exec.Command("bash", "-c", "true").Run() }},
		{"bwrap", func() error {
			return exec.Command(bwrap, "--new-session", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev",
				"--bind", bw, bw, "--unshare-user", "--unshare-pid", "--unshare-net", "--proc", "/proc",
				"--chdir", bw, "--", "bash", "-c", "true").Run()
		}},
	}
	times := make([][]time.Duration, len(kinds))
	for _, k := range kinds { // set up outside the timing
		if err := k.run(); err != nil {
			b.Fatalf("%s: %v", k.name, err)
		}
	}
	for i := 0; b.Loop(); i++ {
		for j := range kinds {
			k := (i + j) % len(kinds)
			b.StopTimer()
			time.Sleep(100 * time.Millisecond)
			b.StartTimer()
			start := time.Now()
			if err := kinds[k].run(); err != nil {
				b.Fatalf("%s: %v", kinds[k].name, err)
			}
			times[k] = append(times[k], time.Since(start))
		}
	}
	med := make([]float64, len(kinds))
	for k, ts := range times {
		slices.Sort(ts)
		med[k] = float64(ts[len(ts)/2])
		b.ReportMetric(med[k], kinds[k].name+"-ns")
	}
	b.ReportMetric(med[0]/med[3], "landlock/bwrap")
	b.ReportMetric(med[0]/med[2], "landlock/bash")
	b.ReportMetric(med[1]/med[3], "shell/bwrap")
}
