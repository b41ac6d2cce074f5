//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// run runs c with l, in a fresh temp dir unless c.Dir is set, with a 10 s
// timeout unless c.Timeout is set.
func run(t *testing.T, l *sandbox.Local, c sandbox.Cmd) (sandbox.Result, error) {
	t.Helper()
	if c.Dir == "" {
		c.Dir = t.TempDir()
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	return l.Exec(t.Context(), c)
}

// isGone reports whether process pid is dead: absent, or a zombie waiting to
// be reaped by whoever inherited it.
func isGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}

// waitGone waits until pid is dead. A SIGKILLed process can take a moment to
// finish dying after kill(2) returns; the bound only keeps a broken Exec from
// hanging the test.
func waitGone(pid int) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if isGone(pid) {
			return true
		}
	}
	return false
}

// pids parses one PID per line.
func pids(t testing.TB, out string) []int {
	t.Helper()
	var ps []int
	for _, f := range strings.Fields(out) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("output %q: %q is not a pid", out, f)
		}
		ps = append(ps, p)
	}
	return ps
}

func assertAllGone(t *testing.T, ps []int, want int) {
	t.Helper()
	if len(ps) != want {
		t.Fatalf("script printed %d pids %v, want %d", len(ps), ps, want)
	}
	for _, p := range ps {
		if !waitGone(p) {
			syscall.Kill(p, syscall.SIGKILL)
			t.Errorf("process %d is still alive after Exec returned", p)
		}
	}
}

func TestExecExit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		script         string
		code           int
		signal         string
		stdout, stderr string
	}{
		{script: "true"},
		{script: ""},
		{script: "exit 3", code: 3},
		{script: "false", code: 1},
		{script: "echo out; echo err >&2; exit 1", code: 1, stdout: "out\n", stderr: "err\n"},
		{script: "printf 'no newline'", stdout: "no newline"},
		{script: "kill -KILL $$", code: -1, signal: "killed"},
		{script: "kill -TERM $$", code: -1, signal: "terminated"},
		{script: "exit 300", code: 44},
	} {
		t.Run(c.script, func(t *testing.T) {
			t.Parallel()
			res, err := run(t, &sandbox.Local{}, sandbox.Cmd{Script: c.script})
			if err != nil {
				t.Fatalf("Exec: %v", err)
			}
			if res.ExitCode != c.code || res.Signal != c.signal || res.TimedOut {
				t.Errorf("exit %d, signal %q, timed out %v; want %d, %q, false", res.ExitCode, res.Signal, res.TimedOut, c.code, c.signal)
			}
			if res.Stdout != c.stdout || res.Stderr != c.stderr {
				t.Errorf("stdout %q, stderr %q; want %q, %q", res.Stdout, res.Stderr, c.stdout, c.stderr)
			}
			if res.StdoutBytes != int64(len(c.stdout)) || res.StderrBytes != int64(len(c.stderr)) {
				t.Errorf("sizes %d, %d; want %d, %d", res.StdoutBytes, res.StderrBytes, len(c.stdout), len(c.stderr))
			}
		})
	}
}

func TestExecSyntaxError(t *testing.T) {
	t.Parallel()
	res, err := run(t, &sandbox.Local{}, sandbox.Cmd{Script: "if then fi ("})
	if err != nil {
		t.Fatalf("Exec: %v (a script the shell rejects is a result, not an error)", err)
	}
	if res.ExitCode == 0 || res.Stderr == "" {
		t.Errorf("exit %d, stderr %q; want non-zero and a message", res.ExitCode, res.Stderr)
	}
}

func TestExecOutputCap(t *testing.T) {
	t.Parallel()
	l := &sandbox.Local{MaxOutput: 100}
	// 1000 bytes on each stream: HEAD, 992 x, TAIL.
	script := `printf HEAD; head -c 992 /dev/zero | tr '\0' x; printf TAIL; ` +
		`{ printf head; head -c 992 /dev/zero | tr '\0' y; printf tail; } >&2`
	res, err := run(t, l, sandbox.Cmd{Script: script})
	if err != nil {
		t.Fatal(err)
	}
	x, y := strings.Repeat("x", 46), strings.Repeat("y", 46)
	if want := "HEAD" + x + "\n[… 900 bytes cut …]\n" + x + "TAIL"; res.Stdout != want {
		t.Errorf("stdout = %q, want %q", res.Stdout, want)
	}
	if want := "head" + y + "\n[… 900 bytes cut …]\n" + y + "tail"; res.Stderr != want {
		t.Errorf("stderr = %q, want %q", res.Stderr, want)
	}
	if res.StdoutBytes != 1000 || res.StderrBytes != 1000 || !res.Cut() {
		t.Errorf("sizes %d, %d, cut %v; want 1000, 1000, true", res.StdoutBytes, res.StderrBytes, res.Cut())
	}
}

func TestExecHugeOutputStaysBounded(t *testing.T) {
	t.Parallel()
	res, err := run(t, &sandbox.Local{MaxOutput: 1000}, sandbox.Cmd{Script: "head -c 20000000 /dev/zero"})
	if err != nil {
		t.Fatal(err)
	}
	if res.StdoutBytes != 20000000 || len(res.Stdout) > 1100 {
		t.Errorf("kept %d of %d bytes; want all 20000000 counted and at most the cap kept", len(res.Stdout), res.StdoutBytes)
	}
}

func TestExecTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	// Each script prints the pids it starts, then blocks. The children ignore
	// SIGTERM, so only the SIGKILL after the grace (or after the shell exits)
	// can end them.
	children := `sleep 100 & echo $!
(trap '' TERM; exec sleep 100) & echo $!
(trap '' TERM; sleep 100 & echo $! > grandchild; wait) & echo $!
until [ -s grandchild ]; do sleep 0.01; done; cat grandchild
echo $$
`
	for _, c := range []struct {
		name   string
		script string
		grace  time.Duration
		signal string
	}{
		{"shell dies on TERM", children + "sleep 100", 100 * time.Millisecond, "terminated"},
		{"shell ignores TERM", "trap '' TERM\n" + children + "sleep 100", 100 * time.Millisecond, "killed"},
		{"no grace", children + "sleep 100", -1, "killed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := &sandbox.Local{Grace: c.grace}
			// Long enough for the script to start and print all five on a
			// loaded machine (300 ms was not, at a load of 15 on 2 CPUs).
			res, err := run(t, l, sandbox.Cmd{Script: c.script, Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut || res.ExitCode != -1 || res.Signal != c.signal {
				t.Errorf("timed out %v, exit %d, signal %q; want true, -1, %q", res.TimedOut, res.ExitCode, res.Signal, c.signal)
			}
			assertAllGone(t, pids(t, res.Stdout), 5)
		})
	}
}

// A background child that keeps stdout open must not keep Exec waiting:
// Exec returns when the shell exits and kills what the shell left behind.
func TestExecShellExitKillsLeftovers(t *testing.T) {
	t.Parallel()
	script := `sleep 100 & echo $!
(trap '' TERM HUP; exec sleep 100) & echo $!
(exec sleep 100 >/dev/null 2>&1 </dev/null) & echo $!
echo done >&2`
	res, err := run(t, &sandbox.Local{}, sandbox.Cmd{Script: script, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut || res.ExitCode != 0 || res.Stderr != "done\n" {
		t.Errorf("timed out %v, exit %d, stderr %q; want false, 0, done (Exec waited for the background children)", res.TimedOut, res.ExitCode, res.Stderr)
	}
	assertAllGone(t, pids(t, res.Stdout), 3)
}

// A process that leaves the group escapes Local (documented); it must not
// keep Exec waiting even though it holds stdout.
func TestExecEscapedProcessDoesNotBlock(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	// The escaped shell writes its pid once it is in its own session, then
	// becomes a sleep that holds the script's stdout.
	script := `setsid sh -c 'echo $$ > escaped; exec sleep 100' &
until [ -s escaped ]; do sleep 0.01; done; cat escaped`
	res, err := run(t, &sandbox.Local{}, sandbox.Cmd{Script: script, Timeout: 20 * time.Second})
	ps := pids(t, res.Stdout)
	for _, p := range ps {
		t.Cleanup(func() { syscall.Kill(p, syscall.SIGKILL) })
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut || res.ExitCode != 0 {
		t.Errorf("timed out %v, exit %d; want false, 0", res.TimedOut, res.ExitCode)
	}
	if len(ps) != 1 || isGone(ps[0]) {
		t.Fatalf("pids %v: the process did not escape, so this test shows nothing", ps)
	}
}

var errStop = errors.New("stop pressed")

// startBlocked runs script (which must create the file named by $READY once
// it has written its pids there) in the background and returns its pids and
// a channel with Exec's outcome.
func startBlocked(t testing.TB, ctx context.Context, l *sandbox.Local, script string) ([]int, <-chan execOut) {
	t.Helper()
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	out := make(chan execOut, 1)
	go func() {
		res, err := l.Exec(ctx, sandbox.Cmd{
			Script:  script,
			Dir:     dir,
			Env:     append(sandbox.MinimalEnv(), "READY="+ready),
			Timeout: 20 * time.Second,
		})
		out <- execOut{res, err}
	}()
	for {
		if b, err := os.ReadFile(ready); err == nil {
			return pids(t, string(b)), out
		}
		select {
		case o := <-out:
			t.Fatalf("Exec ended before the script was ready: %+v, %v", o.res, o.err)
		case <-time.After(time.Millisecond):
		}
	}
}

type execOut struct {
	res sandbox.Result
	err error
}

func TestExecCancelKillsGroup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	script := `trap '' TERM
sleep 100 & echo $! > "$READY.tmp"
(trap '' TERM; exec sleep 100) & echo $! >> "$READY.tmp"
echo $$ >> "$READY.tmp"; echo started
mv "$READY.tmp" "$READY"
wait`
	ps, out := startBlocked(t, ctx, &sandbox.Local{Grace: time.Hour}, script)
	cancel(errStop)
	o := <-out
	if !errors.Is(o.err, errStop) || !errors.Is(o.err, sandbox.ErrAborted) {
		t.Errorf("Exec error = %v, want one wrapping the cause and ErrAborted", o.err)
	}
	if o.res.Stdout != "started\n" || o.res.Signal != "killed" {
		t.Errorf("result %+v, want the output so far and signal killed", o.res)
	}
	assertAllGone(t, ps, 3)
}

func TestExecRefusals(t *testing.T) {
	t.Parallel()
	done, cancel := context.WithCancelCause(t.Context())
	cancel(errStop)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		l    *sandbox.Local
		ctx  context.Context
		cmd  sandbox.Cmd
		want error
	}{
		{"relative dir", &sandbox.Local{}, t.Context(), sandbox.Cmd{Script: "true", Dir: "."}, sandbox.ErrInvalid},
		{"empty dir", &sandbox.Local{}, t.Context(), sandbox.Cmd{Script: "true"}, sandbox.ErrInvalid},
		{"negative timeout", &sandbox.Local{}, t.Context(), sandbox.Cmd{Script: "true", Dir: dir, Timeout: -1}, sandbox.ErrInvalid},
		{"missing dir", &sandbox.Local{}, t.Context(), sandbox.Cmd{Script: "true", Dir: filepath.Join(dir, "nope")}, sandbox.ErrStart},
		{"missing shell", &sandbox.Local{Shell: "/nonexistent/sh"}, t.Context(), sandbox.Cmd{Script: "true", Dir: dir}, sandbox.ErrStart},
		{"NUL in script", &sandbox.Local{}, t.Context(), sandbox.Cmd{Script: "echo a\x00b", Dir: dir}, sandbox.ErrStart},
		{"cancelled before", &sandbox.Local{}, done, sandbox.Cmd{Script: "touch started", Dir: dir}, errStop},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.l.Exec(c.ctx, c.cmd)
			if !errors.Is(err, c.want) {
				t.Errorf("Exec error = %v, want %v", err, c.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
		t.Error("a command ran although its context had ended")
	}
}

func TestExecEnvIsMinimal(t *testing.T) { // not parallel: t.Setenv
	t.Setenv("REIN_TEST_SECRET", "leaked")
	res, err := run(t, &sandbox.Local{}, sandbox.Cmd{Script: "env"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stdout, "REIN_TEST_SECRET") {
		t.Errorf("env shows the parent's variable:\n%s", res.Stdout)
	}
	for _, want := range []string{"TERM=dumb", "LANG=C.UTF-8", "PATH=", "HOME=", "TMPDIR="} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("env lacks %s:\n%s", want, res.Stdout)
		}
	}
	for _, kv := range sandbox.MinimalEnv() {
		if strings.Contains(kv, "REIN_TEST_SECRET") {
			t.Errorf("MinimalEnv has %q", kv)
		}
	}

	res, err = run(t, &sandbox.Local{}, sandbox.Cmd{Script: `echo "$ONLY:${HOME-unset}:${REIN_TEST_SECRET-unset}"`, Env: []string{"ONLY=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "1:unset:unset\n" {
		t.Errorf("with Env {ONLY=1}: %q, want exactly that variable", res.Stdout)
	}
}

func TestExecStdin(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB, far over a pipe buffer
	for _, c := range []struct {
		name, script, stdin, want string
	}{
		{"cat", "cat", "hello\nworld", "hello\nworld"},
		{"none is /dev/null", "cat; echo end", "", "end\n"},
		{"big read", "wc -c", big, fmt.Sprintln(len(big))},
		{"big unread", "echo ignored", big, "ignored\n"},
		{"big unread, leftover holds stdin", "sleep 100 & echo ignored", big, "ignored\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := run(t, &sandbox.Local{}, sandbox.Cmd{Script: c.script, Stdin: c.stdin})
			if err != nil {
				t.Fatal(err)
			}
			if res.Stdout != c.want || res.TimedOut {
				t.Errorf("stdout %q, timed out %v; want %q, false", res.Stdout, res.TimedOut, c.want)
			}
		})
	}
}

func TestExecDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub dir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(sub)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(t, &sandbox.Local{}, sandbox.Cmd{Script: "pwd -P; echo x > made", Dir: sub})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != real+"\n" {
		t.Errorf("pwd = %q, want %q", res.Stdout, real)
	}
	if _, err := os.Stat(filepath.Join(sub, "made")); err != nil {
		t.Errorf("file not made in Dir: %v", err)
	}
}

func TestExecShellFallback(t *testing.T) {
	t.Parallel()
	res, err := run(t, &sandbox.Local{Shell: "/bin/sh"}, sandbox.Cmd{Script: "echo $((6*7))"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "42\n" {
		t.Errorf("stdout %q, want 42", res.Stdout)
	}
	if n := (&sandbox.Local{}).Name(); n != "local" {
		t.Errorf("Name() = %q, want local", n)
	}
}

// When rein dies without cleaning up (SIGKILL), the shell it started must
// die too (Pdeathsig). The test runs itself as the "rein" that dies.
func TestParentDeathKillsShell(t *testing.T) {
	t.Parallel()
	parentDeath(t, "local")
}

// parentDeath runs this test binary as a "rein" that starts a command with
// the backend, SIGKILLs it, and checks that the command died with it.
func parentDeath(t *testing.T, backend string) {
	if ready := os.Getenv("REIN_SANDBOX_PDEATH_READY"); ready != "" {
		// The child: run a command that would outlive us, and block.
		dir := filepath.Dir(ready)
		var ex sandbox.Executor = &sandbox.Local{}
		if backend == "landlock" {
			ex = &sandbox.Landlock{WorkDir: dir}
		}
		_, err := ex.Exec(context.Background(), sandbox.Cmd{
			Script: `echo $$ > "$READY.tmp"; mv "$READY.tmp" "$READY"; exec sleep 100`,
			Dir:    dir,
			Env:    append(sandbox.MinimalEnv(), "READY="+ready),
		})
		fmt.Fprintln(os.Stderr, err)
		os.Exit(0)
	}
	ready := filepath.Join(t.TempDir(), "ready")
	helper := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	// The child's private temp dirs go where this test cleans up.
	helper.Env = append(os.Environ(), "REIN_SANDBOX_PDEATH_READY="+ready, "TMPDIR="+t.TempDir())
	var stderr strings.Builder
	helper.Stderr = &stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if b, err := os.ReadFile(ready); err == nil {
			pid = pids(t, string(b))[0]
			break
		}
		if time.Now().After(deadline) {
			helper.Process.Kill()
			helper.Wait()
			t.Fatalf("the child never started its command: %s", stderr.String())
		}
	}
	helper.Process.Kill() // SIGKILL: no deferred cleanup runs in the child
	helper.Wait()
	if !waitGone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the shell %d outlived its parent", pid)
	}
}
