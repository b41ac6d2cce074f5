//go:build linux

package sandbox_test

import (
	"os"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
)

// A command that allocates past the memory limit is killed by the kernel
// and reported as out of memory; a modest one still runs, and so does the
// next command. Needs a writable memory cgroup (root, or a delegated one).
func TestLandlockMemoryLimit(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Need(t, "cgroups", errNotRoot)
	}
	for _, per := range []bool{false, true} {
		name := "zygote"
		if per {
			name = "per-command"
		}
		t.Run(name, func(t *testing.T) {
			const limit = 64 << 20
			l, work := newLandlock(t, &sandbox.Landlock{Memory: limit, PerCommand: per})
			// tail holds all of a file without a newline: 300 MiB of it.
			res, err := l.Exec(t.Context(), sandbox.Cmd{Script: `head -c 300M /dev/zero | tail; echo survived`, Dir: work, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OOMKilled || res.MemoryLimit != limit {
				t.Errorf("300 MiB under a 64 MiB limit: %+v, want OOMKilled with the limit", res)
			}
			res, err = l.Exec(t.Context(), sandbox.Cmd{Script: `head -c 16M /dev/zero | tail | wc -c`, Dir: work, Timeout: time.Minute})
			if err != nil || res.ExitCode != 0 || res.OOMKilled || res.Stdout != "16777216\n" {
				t.Errorf("16 MiB under a 64 MiB limit: %+v, %v; want it to run", res, err)
			}
		})
	}
	// The control: with no limit the same allocation succeeds.
	l, work := newLandlock(t, &sandbox.Landlock{Memory: -1})
	res, err := l.Exec(t.Context(), sandbox.Cmd{Script: `head -c 300M /dev/zero | tail | wc -c`, Dir: work, Timeout: time.Minute})
	if err != nil || res.OOMKilled || res.Stdout != "314572800\n" {
		t.Errorf("no limit: %+v, %v", res, err)
	}
}

var errNotRoot = errorString("not root: no writable memory cgroup")

type errorString string

func (e errorString) Error() string { return string(e) }
