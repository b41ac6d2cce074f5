//go:build linux

package sandbox

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// waitExited returns once a child has exited, whether it ends before the
// wait begins or while it waits, and leaves it to be reaped: through the
// poller (pollExited) where pidfds poll, and through waitid otherwise.
func TestWaitExited(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		script string
		before time.Duration // how long before the wait the child is given
	}{
		{"ends-first", "exit 3", 200 * time.Millisecond},
		{"ends-while-waited", "sleep 0.2; exit 3", 0},
		{"killed", "kill -9 $$", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, poll := range []bool{true, false} {
				cmd := exec.Command("/bin/sh", "-c", c.script)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(c.before)
				if poll {
					if !pollExited(cmd.Process.Pid) {
						t.Fatal("pollExited: false on a kernel with pollable pidfds")
					}
				} else {
					waitExited(cmd.Process.Pid)
				}
				// Not reaped: a WNOHANG wait finds it exited now.
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WNOHANG, nil)
				if err != nil || pid != cmd.Process.Pid {
					t.Fatalf("poll=%v: after the wait, wait4 = %d, %v: the child had not exited, or was reaped", poll, pid, err)
				}
				if c.name == "killed" && ws.Signal() != syscall.SIGKILL || c.name != "killed" && ws.ExitStatus() != 3 {
					t.Fatalf("poll=%v: status %v", poll, ws)
				}
			}
		})
	}
}

// A pid that is not this process's child cannot be waited for through a
// pidfd: pollExited says so, and the caller falls back.
func TestPollExitedNotAChild(t *testing.T) {
	t.Parallel()
	if pollExited(1) {
		t.Fatal("pollExited(1) = true: init is nobody's child here")
	}
}
