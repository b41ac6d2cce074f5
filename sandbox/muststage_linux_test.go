//go:build linux

package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// TestMustStage: a command that must be staged (Cmd.MustStage) comes back
// staged, or did not run at all (ErrNotStaged): on an executor that does
// not stage, was not asked to, or stopped staging. Both a script the
// shell runs and one run without a shell (the direct path) are tried.
func TestMustStage(t *testing.T) {
	why := errors.New("the overlay went away")
	for _, c := range []struct {
		name   string
		ex     func(t *testing.T) (sandbox.Executor, string)
		staged bool   // the command runs, staged
		reason string // in the ErrNotStaged error
	}{
		{"local", func(t *testing.T) (sandbox.Executor, string) {
			return &sandbox.Local{}, t.TempDir()
		}, false, "local executor does not stage"},
		{"landlock not asked to stage", func(t *testing.T) (sandbox.Executor, string) {
			return newLandlock(t, &sandbox.Landlock{})
		}, false, "not asked to stage"},
		{"landlock per command", func(t *testing.T) (sandbox.Executor, string) {
			return newLandlock(t, &sandbox.Landlock{Stage: true, PerCommand: true})
		}, false, "PerCommand"},
		{"landlock staging", func(t *testing.T) (sandbox.Executor, string) {
			return newStaged(t)
		}, true, ""},
		{"landlock that stopped staging", func(t *testing.T) (sandbox.Executor, string) {
			l, work := newStaged(t)
			if err := sandbox.StopStaging(l, why); err != nil {
				t.Fatal(err)
			}
			return l, work
		}, false, why.Error()},
	} {
		t.Run(c.name, func(t *testing.T) {
			ex, work := c.ex(t)
			for i, script := range []string{"touch %s", "echo x > %s; exit 3"} {
				name := fmt.Sprintf("marker%d", i)
				res, err := ex.Exec(t.Context(), sandbox.Cmd{Script: fmt.Sprintf(script, name), Dir: work, Timeout: 30 * time.Second, MustStage: true})
				_, statErr := os.Lstat(filepath.Join(work, name))
				if statErr == nil {
					t.Errorf("%q: %s is in the work dir: the command wrote straight to it", script, name)
				}
				if c.staged {
					if err != nil || res.Staged == nil {
						t.Fatalf("%q: staged %v, err %v; want it staged", script, res.Staged != nil, err)
					}
					if err := res.Staged.Discard(); err != nil {
						t.Error(err)
					}
					continue
				}
				if !errors.Is(err, sandbox.ErrNotStaged) || !strings.Contains(err.Error(), c.reason) {
					t.Errorf("%q: err %v; want ErrNotStaged saying %q", script, err, c.reason)
				}
				if res.Staged != nil || res.ExitCode != 0 || res.Stdout != "" || res.Stderr != "" {
					t.Errorf("%q: a result from a command that did not run: %+v", script, res)
				}
				// Legitimate use: without MustStage the same command runs,
				// writing straight to the work dir.
				res, err = ex.Exec(t.Context(), sandbox.Cmd{Script: fmt.Sprintf(script, name), Dir: work, Timeout: 30 * time.Second})
				if err != nil || res.Staged != nil {
					t.Fatalf("%q without MustStage: staged %v, err %v", script, res.Staged != nil, err)
				}
				if _, err := os.Lstat(filepath.Join(work, name)); err != nil {
					t.Errorf("%q without MustStage: %v", script, err)
				}
			}
		})
	}
}

// TestMustStageRace: commands that must be staged, in flight while the
// executor stops staging, each come back staged or not run; none writes
// straight to the work dir, whichever side of the switch it falls on.
func TestMustStageRace(t *testing.T) {
	l, work := newStaged(t)
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	var staged, refused int
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == n/2 {
				if err := sandbox.StopStaging(l, errors.New("stopped mid-run")); err != nil {
					t.Error(err)
				}
			}
			res, err := l.Exec(t.Context(), sandbox.Cmd{Script: fmt.Sprintf("echo %d > f%d", i, i), Dir: work, Timeout: 30 * time.Second, MustStage: true})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && res.Staged != nil:
				staged++
				_ = res.Staged.Discard()
			case errors.Is(err, sandbox.ErrNotStaged):
				refused++
			default:
				t.Errorf("command %d: staged %v, err %v; want staged or ErrNotStaged", i, res.Staged != nil, err)
			}
		}()
	}
	wg.Wait()
	left, err := filepath.Glob(filepath.Join(work, "f*"))
	if err != nil || len(left) > 0 {
		t.Errorf("written straight to the work dir: %q (%v)", left, err)
	}
	if staged+refused != n || refused == 0 {
		t.Errorf("%d staged, %d refused of %d; want all accounted for and some refused", staged, refused, n)
	}
}
