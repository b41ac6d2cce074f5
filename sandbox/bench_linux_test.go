//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/reinhq/rein/sandbox"
)

// BenchmarkExec runs `true` bare (exec.Command, no shell), with Local, with
// Landlock (through its zygote) and with Landlock's helper per command
// (PerCommand, the path before the zygote), to price the sandbox:
//
//	go test -run '^$' -bench 'Exec/backend' -benchtime 200x ./sandbox
func BenchmarkExec(b *testing.B) {
	b.Run("backend=bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := exec.Command("true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("backend=local", func(b *testing.B) {
		benchExec(b, &sandbox.Local{}, b.TempDir())
	})
	b.Run("backend=local-reaper", func(b *testing.B) {
		benchExec(b, &sandbox.Local{Helper: os.Args[0]}, b.TempDir())
	})
	b.Run("backend=landlock", func(b *testing.B) {
		l, work := newLandlock(b, &sandbox.Landlock{})
		benchExec(b, l, work)
	})
	b.Run("backend=landlock-percommand", func(b *testing.B) {
		l, work := newLandlock(b, &sandbox.Landlock{PerCommand: true})
		benchExec(b, l, work)
	})
}

func benchExec(b *testing.B, ex sandbox.Executor, dir string) {
	c := sandbox.Cmd{Script: "true", Dir: dir}
	if _, err := ex.Exec(b.Context(), c); err != nil { // set up outside the timing
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := ex.Exec(b.Context(), c)
		if err != nil || res.ExitCode != 0 {
			b.Fatal(err, res)
		}
	}
}
