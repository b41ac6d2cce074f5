//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// sessionEnv makes the test binary a stand-in for rein: it runs the script
// in $REIN_TEST_SESSION (the work dir) through a landlock executor and
// waits to be killed.
const sessionEnv = "REIN_TEST_SESSION"

func session(work string) int {
	var l sandbox.Executor = &sandbox.Landlock{WorkDir: work}
	if os.Getenv("REIN_TEST_BACKEND") == "local" {
		l = &sandbox.Local{Helper: os.Args[0]}
	}
	res, err := l.Exec(context.Background(), sandbox.Cmd{Script: os.Getenv("REIN_TEST_SCRIPT"), Dir: work, Timeout: time.Hour})
	fmt.Fprintln(os.Stderr, res, err)
	return 1
}

// Every process a command started dies with the session, whatever kills
// rein: SIGKILL (nothing of rein runs after it) or a hang-up. The command
// leaves its session (setsid) and its process group (a subshell in the
// background) and writes into the work dir after 3 s; rein is killed
// first, and 4 s later nothing was written.
func TestBackgroundDiesWithRein(t *testing.T) {
	t.Run("landlock", func(t *testing.T) {
		needLandlock(t)
		backgroundDiesWithRein(t, "landlock")
	})
	t.Run("local", func(t *testing.T) { backgroundDiesWithRein(t, "local") })
}

func backgroundDiesWithRein(t *testing.T, backend string) {
	if testing.Short() {
		t.Skip("waits 4 s")
	}
	const script = `setsid sh -c 'sleep 3; echo x > setsid.out' &
( sleep 3; echo x > subshell.out ) &
nohup sh -c 'sleep 3; echo x > nohup.out' >/dev/null 2>&1 &
sh -c '(sh -c "sleep 3; echo x > daemon.out" &) &' 
echo ready > ready.tmp; mv ready.tmp ready
sleep 1000`
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			work := t.TempDir()
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), sessionEnv+"="+work, "REIN_TEST_SCRIPT="+script, "REIN_TEST_BACKEND="+backend)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(filepath.Join(work, "ready")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("the command never started")
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			time.Sleep(4 * time.Second)
			for _, f := range []string{"setsid.out", "subshell.out", "nohup.out", "daemon.out"} {
				if _, err := os.Stat(filepath.Join(work, f)); err == nil {
					t.Errorf("%s was written after rein died of %v: a process of the command outlived it", f, sig)
				}
			}
		})
	}
}

// With the reaper, what a command leaves behind dies when its shell exits,
// also what left the group; a command that waits for its own background
// child still gets its work done.
func TestLocalReaperKillsLeftovers(t *testing.T) {
	work := t.TempDir()
	l := &sandbox.Local{Helper: os.Args[0]}
	res, err := l.Exec(t.Context(), sandbox.Cmd{Script: `(sleep 0.2; echo ok > waited.out) & wait; setsid sh -c 'sleep 2; echo x > setsid.out' & echo done`, Dir: work})
	if err != nil || res.ExitCode != 0 || res.Stdout != "done\n" {
		t.Fatalf("Exec = %+v, %v", res, err)
	}
	if b, err := os.ReadFile(filepath.Join(work, "waited.out")); err != nil || string(b) != "ok\n" {
		t.Errorf("the waited-for child did not finish: %q, %v", b, err)
	}
	time.Sleep(3 * time.Second)
	if _, err := os.Stat(filepath.Join(work, "setsid.out")); err == nil {
		t.Error("a setsid'd leftover outlived its command")
	}
}
