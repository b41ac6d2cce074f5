package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

func TestExec(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{MaxOutput: 64})
	if err := os.Mkdir(filepath.Join(work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		cmd    sandbox.Cmd
		stdout string
		stderr string
		exit   int
	}{
		{"stdout, stderr and status", sandbox.Cmd{Script: "echo out; echo err >&2; exit 3"}, "out\n", "err\n", 3},
		{"pipeline", sandbox.Cmd{Script: "printf 'b\\na\\nc\\n' | sort | tr a-z A-Z | head -2"}, "A\nB\n", "", 0},
		{"working directory", sandbox.Cmd{Script: "pwd", Dir: "sub"}, "WORK/sub\n", "", 0},
		{"stdin", sandbox.Cmd{Script: "cat; echo", Stdin: "line one\nline two"}, "line one\nline two\n", "", 0},
		{"no stdin", sandbox.Cmd{Script: "cat; echo done"}, "done\n", "", 0},
		{"stdin not inherited as a variable", sandbox.Cmd{Script: "env | grep -c STDIN", Stdin: "x"}, "0\n", "", 1},
		// The runtime adds HOSTNAME, and HOME and PATH when the command has none.
		{"given environment", sandbox.Cmd{Script: "echo \"$FOO|$HOME|${PATH:+set}|${LANG:-unset}\"", Env: []string{"FOO=bar"}}, "bar|/|set|unset\n", "", 0},
		{"default environment", sandbox.Cmd{Script: "echo $HOME $TMPDIR $LANG"}, "/tmp /tmp C.UTF-8\n", "", 0},
		{"odd characters in env", sandbox.Cmd{Script: "printf '%s' \"$X\"", Env: []string{"X=a b\n$(id)'\""}}, "a b\n$(id)'\"", "", 0},
		{"script quoting", sandbox.Cmd{Script: `printf '%s|' "$0" 'it''s' "a  b"; echo`}, "/bin/sh|its|a  b|\n", "", 0},
		{"marker-like output", sandbox.Cmd{Script: `echo "0123 45" >&2; printf '\n' >&2`}, "", "0123 45\n\n", 0},
		{"stderr without newline", sandbox.Cmd{Script: `printf 'no newline' >&2`}, "", "no newline", 0},
		{"output cut", sandbox.Cmd{Script: "seq 1 1000"}, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n[… 3829 bytes cut …]\n93\n994\n995\n996\n997\n998\n999\n1000\n", "", 0},
		{"exit status of a signal", sandbox.Cmd{Script: "kill -s KILL $$"}, "", "Killed\n", 137},
		{"empty script", sandbox.Cmd{Script: ""}, "", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd := c.cmd
			cmd.Dir = filepath.Join(work, cmd.Dir)
			cmd.Timeout = 30 * time.Second
			res, err := e.Exec(t.Context(), cmd)
			if err != nil {
				t.Fatalf("Exec: %v", err)
			}
			want := strings.ReplaceAll(c.stdout, "WORK", work)
			if res.Stdout != want || res.Stderr != c.stderr || res.ExitCode != c.exit {
				t.Errorf("got stdout %q stderr %q exit %d\nwant stdout %q stderr %q exit %d", res.Stdout, res.Stderr, res.ExitCode, want, c.stderr, c.exit)
			}
			if res.TimedOut || res.Signal != "" {
				t.Errorf("TimedOut %v, Signal %q; want neither", res.TimedOut, res.Signal)
			}
		})
	}
}

func TestExecRefuses(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{})
	for _, c := range []struct {
		name string
		cmd  sandbox.Cmd
		want error
	}{
		{"relative dir", sandbox.Cmd{Script: "true", Dir: "sub"}, sandbox.ErrInvalid},
		{"dir outside the work dir", sandbox.Cmd{Script: "true", Dir: "/tmp"}, sandbox.ErrInvalid},
		{"dir escaping with ..", sandbox.Cmd{Script: "true", Dir: work + "/../x"}, sandbox.ErrInvalid},
		{"negative timeout", sandbox.Cmd{Script: "true", Dir: work, Timeout: -1}, sandbox.ErrInvalid},
		{"env entry without =", sandbox.Cmd{Script: "true", Dir: work, Env: []string{"HOME"}}, sandbox.ErrInvalid},
		{"stdin with NUL", sandbox.Cmd{Script: "true", Dir: work, Stdin: "a\x00b"}, sandbox.ErrInvalid},
		{"stdin too long", sandbox.Cmd{Script: "true", Dir: work, Stdin: strings.Repeat("x", MaxStdin+1)}, sandbox.ErrInvalid},
		{"missing dir", sandbox.Cmd{Script: "true", Dir: work + "/missing"}, sandbox.ErrStart},
	} {
		res, err := e.Exec(t.Context(), c.cmd)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Exec = %+v, %v; want %v", c.name, res, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.Exec(ctx, sandbox.Cmd{Script: "true", Dir: work}); !errors.Is(err, sandbox.ErrAborted) {
		t.Errorf("cancelled context: %v, want ErrAborted", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Exec(t.Context(), sandbox.Cmd{Script: "true", Dir: work}); !errors.Is(err, sandbox.ErrStart) {
		t.Errorf("after Close: %v, want ErrStart", err)
	}
}

// TestExecFilesBelongToTheUser: what a command writes in the work dir is
// the user's on the host.
func TestExecFilesBelongToTheUser(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{})
	res := run(t, e, work, "mkdir -p a/b && echo data > a/b/f && ln -s f a/b/l && id -u && id -g")
	if res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
	if want := fmt.Sprintf("%d\n%d\n", os.Getuid(), os.Getgid()); res.Stdout != want {
		t.Errorf("id in the container = %q, want %q", res.Stdout, want)
	}
	for _, p := range []string{"a", "a/b", "a/b/f"} {
		fi, err := os.Lstat(filepath.Join(work, p))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != os.Getuid() || int(st.Gid) != os.Getgid() {
			t.Errorf("%s belongs to %d:%d, want %d:%d", p, st.Uid, st.Gid, os.Getuid(), os.Getgid())
		}
	}
	if b, err := os.ReadFile(filepath.Join(work, "a/b/f")); err != nil || string(b) != "data\n" {
		t.Errorf("a/b/f = %q, %v", b, err)
	}
}

// TestExecTimeout: a timed-out command is stopped, with SIGKILL when it
// ignores SIGTERM, and nothing of it is left in the container. The timeout
// runs from the client's start, so it leaves a loaded machine time to
// reach the trap; the grace leaves a polite command time to go through
// docker exec's teardown (with 1 s and 0.5 s, two test suites at once on
// 2 CPUs made both cases flaky).
func TestExecTimeout(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{Grace: 3 * time.Second})
	for _, c := range []struct {
		name, script, signal string
	}{
		{"polite", "sleep 1001 & sleep 1002", "terminated"},
		{"ignores SIGTERM", "trap '' TERM; sleep 1003 & sleep 1004", "killed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := e.Exec(t.Context(), sandbox.Cmd{Script: c.script, Dir: work, Timeout: 3 * time.Second})
			if err != nil {
				t.Fatalf("Exec: %v", err)
			}
			if !res.TimedOut || res.ExitCode != -1 || res.Signal != c.signal {
				t.Errorf("got %+v; want TimedOut, exit -1, signal %q", res, c.signal)
			}
		})
	}
	t.Cleanup(func() { noneLeft(t, e, work, "sleep 100") })
}

// noneLeft fails the test if a process whose command line holds marker runs
// in the container.
func noneLeft(t *testing.T, e *Executor, work, marker string) {
	t.Helper()
	for _, p := range processes(t, e, work) {
		if strings.Contains(p, marker) {
			t.Errorf("still running in the container: %q", p)
		}
	}
}

// TestExecAbort: when ctx ends, the command and everything of its group in
// the container is killed at once, not only the docker client.
func TestExecAbort(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{})
	ctx, cancel := context.WithCancelCause(t.Context())
	stop := errors.New("user pressed ctrl-c")
	done := make(chan struct{})
	var res sandbox.Result
	var err error
	go func() {
		defer close(done)
		res, err = e.Exec(ctx, sandbox.Cmd{Script: "echo before; sleep 2001 & touch started; sleep 2002", Dir: work, Timeout: time.Hour})
	}()
	waitFile(t, filepath.Join(work, "started"), 30*time.Second)
	cancel(stop)
	<-done
	if !errors.Is(err, sandbox.ErrAborted) || !errors.Is(err, stop) {
		t.Errorf("Exec error = %v, want ErrAborted wrapping the cause", err)
	}
	if res.Stdout != "before\n" || res.Signal != "killed" {
		t.Errorf("result %+v; want the output until then and signal killed", res)
	}
	noneLeft(t, e, work, "sleep 200")
}

// TestExecClientKilled: the docker client dying (as when rein crashes) ends
// the exec's stdin, and the watcher kills the command in the container.
func TestExecClientKilled(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{})
	c, err := e.prepare(sandbox.Cmd{Script: "touch started; sleep 3001", Dir: work})
	if err != nil {
		t.Fatal(err)
	}
	args, env := e.execArgs(randomHex(8), c, e.ID())
	cmd := exec.Command(e.runtime, args...)
	cmd.Env = env
	if _, err := cmd.StdinPipe(); err != nil { // held open, never written
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(work, "started"), 30*time.Second)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := false
		for _, p := range processes(t, e, work) {
			left = left || strings.Contains(p, "sleep 3001")
		}
		if !left {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("sleep 3001 still runs in the container 10s after its client was killed")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestExecWatcherKilled: a script that kills its watcher is still stopped
// at its timeout, through the fallback exec.
func TestExecWatcherKilled(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{Grace: -1})
	script := `for p in /proc/[0-9]*; do
	[ "$(cat $p/cmdline 2>/dev/null | tr '\0' ' ')" = "$(tr '\0' ' ' </proc/$PPID/cmdline)" ] && [ "${p#/proc/}" != "$PPID" ] && kill -s KILL "${p#/proc/}"
done
sleep 4001`
	res, err := e.Exec(t.Context(), sandbox.Cmd{Script: script, Dir: work, Timeout: time.Second})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if !res.TimedOut || res.Signal != "killed" {
		t.Errorf("got %+v; want a timeout and signal killed", res)
	}
	noneLeft(t, e, work, "sleep 4001")
}

// TestExecBackground: a background process neither outlives the call nor
// keeps Exec waiting, whether or not it holds the output open.
func TestExecBackground(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{})
	for i, script := range []string{
		"sleep 5001 & echo started",
		"sleep 5002 >/dev/null 2>&1 </dev/null & echo started",
		"(sleep 5003; echo late) & echo started",
	} {
		res := run(t, e, work, script)
		// At once, from the host, which sees the container's processes.
		if pids := hostProcesses(t, fmt.Sprintf("sleep\x00500%d\x00", i+1)); len(pids) > 0 {
			t.Errorf("%q: its background process %v still runs when Exec returns", script, pids)
		}
		if res.Stdout != "started\n" || res.ExitCode != 0 {
			t.Errorf("%q: %+v", script, res)
		}
	}
	noneLeft(t, e, work, "sleep 500")
}

// hostProcesses returns the pids of the host's processes whose command
// line is cmdline.
func hostProcesses(t *testing.T, cmdline string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err == nil && string(b) == cmdline {
			pids = append(pids, filepath.Base(d))
		}
	}
	return pids
}

// TestExecConcurrent: calls in one container run side by side, each with
// its own output and status.
func TestExecConcurrent(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			res, err := e.Exec(t.Context(), sandbox.Cmd{Script: fmt.Sprintf("sleep 0.2; echo %d; echo e%d >&2; exit %d", i, i, i), Dir: work, Timeout: 30 * time.Second})
			if err != nil || res.Stdout != fmt.Sprintf("%d\n", i) || res.Stderr != fmt.Sprintf("e%d\n", i) || res.ExitCode != i {
				t.Errorf("call %d: %+v, %v", i, res, err)
			}
		})
	}
	wg.Wait()
}

// TestStartRefuses: Start checks its options before it runs anything.
func TestStartRefuses(t *testing.T) {
	t.Parallel()
	needImage(t)
	work := tempDir(t)
	for _, c := range []struct {
		name string
		o    Options
		want error
	}{
		{"root as work dir", Options{Image: testImage, WorkDir: "/"}, sandbox.ErrInvalid},
		{"no image", Options{WorkDir: work}, sandbox.ErrInvalid},
		{"missing image", Options{Image: "rein-no-such-image:" + randomHex(4), WorkDir: work}, ErrNoImage},
		{"missing runtime", Options{Image: testImage, WorkDir: work, Runtime: "rein-no-such-runtime"}, sandbox.ErrUnsupported},
		{"host network", Options{Image: testImage, WorkDir: work, Network: "host"}, sandbox.ErrInvalid},
	} {
		e, err := Start(t.Context(), c.o)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Start = %v; want %v", c.name, err, c.want)
		}
		if e != nil {
			e.Close()
		}
	}
}

// TestCloseRemoves: Close removes the container, and a second Close is
// no error.
func TestCloseRemoves(t *testing.T) {
	t.Parallel()
	e, _ := start(t, Options{})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	out, err := exec.Command("docker", "ps", "--all", "--quiet", "--no-trunc", "--filter", "id="+e.ID()).Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(out)) != "" {
		t.Errorf("container %s still exists after Close", e.ID())
	}
}

// A container killed mid-session is started again once: the next command
// runs in a new one. Killed again, the executor is dead: every later
// command fails with sandbox.ErrExecutorDead, saying so.
func TestDeadContainerRestartedOnce(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{})
	first := e.ID()
	if res := run(t, e, work, "echo one"); res.Stdout != "one\n" {
		t.Fatalf("first command: %+v", res)
	}
	kill := func(id string) {
		t.Helper()
		if out, err := exec.Command(e.runtime, "kill", id).CombinedOutput(); err != nil {
			t.Fatalf("docker kill: %v: %s", err, out)
		}
	}
	kill(first)
	if res := run(t, e, work, "echo two"); res.Stdout != "two\n" {
		t.Fatalf("after the kill: %+v", res)
	}
	second := e.ID()
	if second == first {
		t.Fatalf("still container %s", first)
	}
	kill(second)
	for range 2 {
		_, err := e.Exec(t.Context(), sandbox.Cmd{Script: "echo three", Dir: work, Timeout: time.Minute})
		if !errors.Is(err, sandbox.ErrExecutorDead) || !strings.Contains(err.Error(), "died again") {
			t.Fatalf("after the second kill: %v, want ErrExecutorDead", err)
		}
	}
}
