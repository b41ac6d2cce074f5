//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// TestLandlockOrdinaryWork shows that what a coding agent does day to day
// works inside the sandbox.
func TestLandlockOrdinaryWork(t *testing.T) {
	l, work := newLandlock(t, &sandbox.Landlock{})
	probe := copyProbe(t, work)
	env := append(sandbox.MinimalEnv(), "PROBE="+probe)
	for _, c := range []struct {
		name, script, want string
	}{
		{"pipeline", `printf 'a\nb\n' | sort | wc -l`, "2\n"},
		{"write files in the work dir", `mkdir -p d/e && echo hi > d/e/f && mv d/e/f d/g && cat d/g && rm -r d && [ ! -e d ] && echo gone`, "hi\ngone\n"},
		{"temp dir", `f=$(mktemp) && echo tmp > "$f" && cat "$f" && case "$f" in "$TMPDIR"/*) echo inside;; esac`, "tmp\ninside\n"},
		{"home is the private one", `echo x > ~/.cfg && cat ~/.cfg && [ "$HOME" != "` + os.Getenv("HOME") + `" ] && echo private`, "x\nprivate\n"},
		{"process substitution", `cat <(echo sub)`, "sub\n"},
		{"stderr by name", `echo err > /dev/stderr; echo out > /dev/stdout`, "out\n"},
		{"devices", `head -c 3 /dev/zero | wc -c; head -c 3 /dev/urandom | wc -c; echo gone > /dev/null`, "3\n3\n"},
		{"users and groups", `id -un`, userName(t) + "\n"},
		{"world-readable /etc", `grep -c ^root: /etc/passwd; ls /etc >/dev/null && echo listed`, "1\nlisted\n"},
		{"own /proc", `grep -c ^Name: /proc/self/status; readlink /proc/$$/cwd`, "1\n" + realPath(t, work) + "\n"},
		{"socketpair", `REIN_SANDBOX_PROBE=socketpair "$PROBE"`, "done\n"},
		{"background job and wait", `(sleep 0.1; echo bg) & wait; echo fg`, "bg\nfg\n"},
		{"executables made here", `printf '#!/bin/sh\necho made\n' > run.sh && chmod +x run.sh && ./run.sh`, "made\n"},
		{"git", `git init -q repo && cd repo && echo a > a && git add a && git -c user.name=t -c user.email=t@e commit -qm a && git log --format=%s`, "a\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := l.Exec(t.Context(), sandbox.Cmd{Script: c.script, Dir: work, Env: env, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatalf("Exec: %v", err)
			}
			if res.ExitCode != 0 || res.Stdout != c.want {
				t.Errorf("exit %d, stdout %q; want 0, %q\nstderr: %s", res.ExitCode, res.Stdout, c.want, res.Stderr)
			}
		})
	}
}

func userName(t *testing.T) string {
	out, err := exec.Command("id", "-un").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func realPath(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLandlockGoBuild builds and runs a small module inside the sandbox,
// with the Go toolchain from the system directories and its caches in the
// private temp dir.
func TestLandlockGoBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("a cold go build takes a minute")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go in PATH")
	}
	l, work := newLandlock(t, &sandbox.Landlock{})
	files := map[string]string{
		"go.mod":  "module hello\n\ngo 1.26\n",
		"main.go": "package main\n\nfunc main() { println(\"hello from the sandbox\") }\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin", "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod"}
	res, err := l.Exec(t.Context(), sandbox.Cmd{Script: "go build -o hello . && ./hello", Dir: work, Env: env, Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(res.Stderr, "hello from the sandbox") {
		t.Errorf("go build: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// TestLandlockForkBomb starts far more processes than the sandbox allows:
// the limit holds (the probe stops short), the host survives, and nothing
// is left running afterwards.
func TestLandlockForkBomb(t *testing.T) {
	const limit, tries = 64, 1000
	l, work := newLandlock(t, &sandbox.Landlock{MaxProcs: limit})
	probe := copyProbe(t, work)
	res, err := l.Exec(t.Context(), sandbox.Cmd{
		Script:  `REIN_SANDBOX_PROBE=fork "$PROBE" ` + strconv.Itoa(tries),
		Dir:     work,
		Env:     append(sandbox.MinimalEnv(), "PROBE="+probe),
		Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`started (\d+)`).FindStringSubmatch(res.Stdout)
	if m == nil {
		t.Fatalf("no count from the probe: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	n, _ := strconv.Atoi(m[1])
	t.Logf("the probe started %d of %d processes under a limit of %d tasks", n, tries, limit)
	if n >= limit || res.ExitCode != 1 {
		t.Errorf("started %d of %d processes (exit %d); the limit is %d", n, tries, res.ExitCode, limit)
	}
	// The host still forks.
	if err := exec.Command("true").Run(); err != nil {
		t.Errorf("the host cannot start a process after the bomb: %v", err)
	}
}

// TestLandlockFillTmp writes far more than MaxFileSize into the private
// temp dir: the per-file cap stops it there.
func TestLandlockFillTmp(t *testing.T) {
	const cap = 1 << 20
	l, work := newLandlock(t, &sandbox.Landlock{MaxFileSize: cap})
	res, err := l.Exec(t.Context(), sandbox.Cmd{
		// Bounded, so that a broken cap cannot fill the disk: 8 times the cap.
		Script:  `head -c 8388608 /dev/zero > "$TMPDIR/fill"; echo "exit $?"; stat -c %s "$TMPDIR/fill"`,
		Dir:     work,
		Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	// head dies of SIGXFSZ (128+25) at the cap.
	if want := "exit 153\n" + strconv.Itoa(cap) + "\n"; res.Stdout != want {
		t.Errorf("stdout %q, want %q\nstderr: %s", res.Stdout, want, res.Stderr)
	}
}

// TestLandlockKillsWhatLeftTheGroup: a process that left the command's
// process group and session is killed when the command ends too, before
// Exec returns: by the zygote (its Landlock signal scope reaches exactly
// its commands' domains), and with a pids cgroup by rein too. TestStagingAsUser
// runs it as a user, without a cgroup.
func TestLandlockKillsWhatLeftTheGroup(t *testing.T) {
	l, work := newLandlock(t, &sandbox.Landlock{})
	res, err := l.Exec(t.Context(), sandbox.Cmd{
		Script:  `setsid sh -c 'echo $$ > escaped; exec sleep 100' & until [ -s escaped ]; do sleep 0.01; done; cat escaped`,
		Dir:     work,
		Timeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ps := pids(t, res.Stdout)
	for _, p := range ps {
		t.Cleanup(func() { syscall.Kill(p, syscall.SIGKILL) })
	}
	if len(ps) != 1 || !waitGone(ps[0]) {
		t.Errorf("pids %v: the process that left the group is still running", ps)
	}
}

// TestLandlockLeftoversWaitForTheLastCommand: what a command left behind
// is killed once no command runs (by the zygote, and in the executor's
// shared cgroup by rein),
// never while another one does (a sweep cannot tell whose a process is,
// and must not kill a running command's).
func TestLandlockLeftoversWaitForTheLastCommand(t *testing.T) {
	l, work := newLandlock(t, &sandbox.Landlock{})
	other := make(chan error, 1)
	go func() {
		res, err := l.Exec(t.Context(), sandbox.Cmd{Script: "until [ -e release ]; do sleep 0.01; done; echo alive", Dir: work, Timeout: time.Minute})
		if err == nil && res.Stdout != "alive\n" {
			err = fmt.Errorf("the other command was cut short: exit %d, stdout %q, signal %q", res.ExitCode, res.Stdout, res.Signal)
		}
		other <- err
	}()
	res, err := l.Exec(t.Context(), sandbox.Cmd{
		Script:  `setsid sh -c 'echo $$ > left; exec sleep 100' & until [ -s left ]; do sleep 0.01; done; cat left`,
		Dir:     work,
		Timeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ps := pids(t, res.Stdout)
	for _, p := range ps {
		t.Cleanup(func() { syscall.Kill(p, syscall.SIGKILL) })
	}
	if len(ps) != 1 || syscall.Kill(ps[0], 0) != nil {
		t.Fatalf("pids %v: the leftover is gone while another command still runs; it must wait", ps)
	}
	if err := os.WriteFile(filepath.Join(work, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	if !waitGone(ps[0]) {
		t.Errorf("pid %d: the leftover still runs after the last command ended", ps[0])
	}
}

// The sandboxed shell dies with rein, as Local's does: the helper keeps
// the parent-death signal through its exec.
func TestLandlockParentDeathKillsShell(t *testing.T) {
	if os.Getenv("REIN_SANDBOX_PDEATH_READY") == "" {
		needLandlock(t)
	}
	parentDeath(t, "landlock")
	if os.Getenv("REIN_SANDBOX_PDEATH_READY") == "" {
		// A new executor sweeps the cgroup the killed one left behind.
		l, work := newLandlock(t, &sandbox.Landlock{})
		if _, err := l.Exec(t.Context(), sandbox.Cmd{Script: "true", Dir: work}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLandlockContract runs Local's contract through the landlock backend:
// exit codes and signals, output, stdin, environment, timeouts and aborts.
func TestLandlockContract(t *testing.T) {
	l, work := newLandlock(t, &sandbox.Landlock{Grace: 100 * time.Millisecond, MaxOutput: 100})
	for _, c := range []struct {
		script, stdin  string
		code           int
		signal         string
		stdout, stderr string
	}{
		{script: "true"},
		{script: "exit 3", code: 3},
		{script: "echo out; echo err >&2; exit 1", code: 1, stdout: "out\n", stderr: "err\n"},
		{script: "kill -KILL $$", code: -1, signal: "killed"},
		{script: "kill -TERM $$", code: -1, signal: "terminated"},
		{script: "cat", stdin: "hello\nworld", stdout: "hello\nworld"},
		{script: "no-such-command", code: 127, stderr: "/bin/bash: line 1: no-such-command: command not found\n"},
		{script: `head -c 1000 /dev/zero | tr '\0' x`, stdout: strings.Repeat("x", 50) + "\n[… 900 bytes cut …]\n" + strings.Repeat("x", 50)},
	} {
		t.Run(c.script, func(t *testing.T) {
			t.Parallel()
			res, err := l.Exec(t.Context(), sandbox.Cmd{Script: c.script, Dir: work, Stdin: c.stdin, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatalf("Exec: %v", err)
			}
			if res.ExitCode != c.code || res.Signal != c.signal || res.Stdout != c.stdout || res.Stderr != c.stderr {
				t.Errorf("exit %d, signal %q, stdout %q, stderr %q; want %d, %q, %q, %q", res.ExitCode, res.Signal, res.Stdout, res.Stderr, c.code, c.signal, c.stdout, c.stderr)
			}
		})
	}
	t.Run("environment", func(t *testing.T) {
		t.Parallel()
		res, err := l.Exec(t.Context(), sandbox.Cmd{Script: `echo "$ONLY:${LANG-unset}"; case "$TMPDIR" in /*rein-sandbox-*) echo tmp;; esac`, Dir: work, Env: []string{"ONLY=1"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stdout != "1:unset\ntmp\n" {
			t.Errorf("stdout %q: want exactly the given variables, and TMPDIR in the private temp dir", res.Stdout)
		}
	})
	t.Run("timeout kills the group", func(t *testing.T) {
		t.Parallel()
		res, err := l.Exec(t.Context(), sandbox.Cmd{
			Script:  "trap '' TERM; sleep 100 & echo $!; (trap '' TERM; exec sleep 100) & echo $!; echo $$; sleep 100",
			Dir:     work,
			Timeout: 2 * time.Second, // room to print the pids on a loaded machine
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || res.Signal != "killed" {
			t.Errorf("timed out %v, signal %q; want true, killed", res.TimedOut, res.Signal)
		}
		assertAllGone(t, pids(t, res.Stdout), 3)
	})
	t.Run("abort", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancelCause(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := l.Exec(ctx, sandbox.Cmd{Script: "touch started; sleep 100", Dir: work, Timeout: 20 * time.Second})
			done <- err
		}()
		for {
			if _, err := os.Stat(filepath.Join(work, "started")); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cancel(errStop)
		if err := <-done; !errors.Is(err, sandbox.ErrAborted) || !errors.Is(err, errStop) {
			t.Errorf("Exec error = %v, want ErrAborted and the cause", err)
		}
	})
}

// TestLandlockRefusals: what the backend refuses to run, and that it
// refuses before anything runs.
func TestLandlockRefusals(t *testing.T) {
	needLandlock(t)
	work := t.TempDir()
	outside := t.TempDir()
	home := t.TempDir()
	t.Setenv("HOME", home) // holds .ssh, as far as the check cares
	for _, c := range []struct {
		name string
		l    *sandbox.Landlock
		cmd  sandbox.Cmd
		want error
	}{
		{"dir outside the work dir", &sandbox.Landlock{WorkDir: work}, sandbox.Cmd{Script: "touch ran", Dir: outside}, sandbox.ErrInvalid},
		{"relative work dir", &sandbox.Landlock{WorkDir: "rel"}, sandbox.Cmd{Script: "touch ran", Dir: work}, sandbox.ErrInvalid},
		{"work dir is /", &sandbox.Landlock{WorkDir: "/"}, sandbox.Cmd{Script: "touch ran", Dir: work}, sandbox.ErrInvalid},
		{"work dir holds ~/.ssh", &sandbox.Landlock{WorkDir: home}, sandbox.Cmd{Script: "touch ran", Dir: home}, sandbox.ErrInvalid},
		{"unknown network policy", &sandbox.Landlock{WorkDir: work, Net: "host"}, sandbox.Cmd{Script: "touch ran", Dir: work}, sandbox.ErrInvalid},
		{"missing work dir", &sandbox.Landlock{WorkDir: filepath.Join(work, "nope")}, sandbox.Cmd{Script: "touch ran", Dir: filepath.Join(work, "nope")}, sandbox.ErrStart},
		{"helper that is no helper", &sandbox.Landlock{WorkDir: work, Helper: "/bin/true"}, sandbox.Cmd{Script: "touch ran", Dir: work}, sandbox.ErrStart},
		{"helper that is missing", &sandbox.Landlock{WorkDir: work, Helper: "/nonexistent/rein"}, sandbox.Cmd{Script: "touch ran", Dir: work}, sandbox.ErrStart},
		{"shell that is missing", &sandbox.Landlock{WorkDir: work, Shell: "/nonexistent/sh"}, sandbox.Cmd{Script: "touch ran", Dir: work}, sandbox.ErrStart},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer c.l.Close()
			_, err := c.l.Exec(t.Context(), c.cmd)
			if !errors.Is(err, c.want) {
				t.Errorf("Exec error = %v, want %v", err, c.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(work, "ran")); err == nil {
		t.Error("a refused command ran")
	}
	l := &sandbox.Landlock{WorkDir: work}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Exec(t.Context(), sandbox.Cmd{Script: "true", Dir: work}); !errors.Is(err, sandbox.ErrStart) {
		t.Errorf("Exec after Close: %v, want ErrStart", err)
	}
	if n := l.Name(); n != "landlock" {
		t.Errorf("Name() = %q", n)
	}
}

// TestLandlockCloseRemovesTemp: Close removes the private temp dir, even
// with read-only directories a command left in it.
func TestLandlockCloseRemovesTemp(t *testing.T) {
	needLandlock(t)
	work := t.TempDir()
	l := &sandbox.Landlock{WorkDir: work}
	res, err := l.Exec(t.Context(), sandbox.Cmd{Script: `mkdir -p "$TMPDIR/ro/x" && chmod 0500 "$TMPDIR/ro" && echo "$TMPDIR"`, Dir: work})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Exec: %v, %+v", err, res)
	}
	tmp := strings.TrimSpace(res.Stdout)
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("temp dir %q: %v", tmp, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp dir %s still there after Close: %v", tmp, err)
	}
}

// TestLandlockAsUser runs the escape suite again as an ordinary user
// (nobody), when the tests run as root: the helper then starts in a user
// namespace, and the limits come from RLIMIT_NPROC, not a cgroup.
func TestLandlockAsUser(t *testing.T) {
	if os.Getenv("REIN_SANDBOX_AS_USER") != "" {
		t.Skip("already the ordinary user")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: the other tests already run as an ordinary user")
	}
	needLandlock(t)
	const uid, gid = 65534, 65534
	dir := t.TempDir()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := copyProbe(t, dir)
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, uid, gid); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "-test.run=^TestLandlock(Escapes|OrdinaryWork|Contract|ForkBomb|FillTmp|Refusals)$", "-test.v", "-test.count=1")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "TMPDIR=" + tmp, "USER=nobody",
		"REIN_REQUIRE=" + os.Getenv("REIN_REQUIRE"), "REIN_SANDBOX_AS_USER=1",
	}
	cmd.Dir = tmp
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the suite as nobody: %v\n%s", err, out)
	}
	for _, name := range []string{"TestLandlockEscapes", "TestLandlockOrdinaryWork", "TestLandlockContract", "TestLandlockForkBomb", "TestLandlockFillTmp"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass as nobody:\n%s", name, out)
		}
	}
	t.Logf("as nobody:\n%s", out)
}

// TestLeftoverCannotWriteLater: a process a command leaves behind, out of
// its group and session, that writes to the work dir by absolute path a
// moment after the command ends, writes nothing: it is killed before Exec
// returns. Staged, its write would otherwise land in the work dir itself
// once the overlay is detached, neither staged nor watched; unstaged,
// after run_bash's watch has compared. TestStagingAsUser runs it as a
// user, without a pids cgroup.
func TestLeftoverCannotWriteLater(t *testing.T) {
	for _, stage := range []bool{true, false} {
		t.Run(fmt.Sprintf("stage=%v", stage), func(t *testing.T) {
			l, work := newLandlock(t, &sandbox.Landlock{Stage: stage})
			script := fmt.Sprintf(`setsid sh -c 'echo $$ > %[1]s/started; sleep 0.5; echo evil > %[1]s/.envrc; echo evil > %[1]s/plain' </dev/null >/dev/null 2>&1 &
until [ -s %[1]s/started ]; do sleep 0.01; done; echo ok`, work)
			res, err := l.Exec(t.Context(), sandbox.Cmd{Script: script, Dir: work, Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.Stdout != "ok\n" {
				t.Fatalf("stdout %q, stderr %q", res.Stdout, res.Stderr)
			}
			if stage && res.Staged == nil && l.StageErr() == nil {
				t.Fatal("not staged")
			}
			if res.Staged != nil {
				_ = res.Staged.Discard()
			}
			time.Sleep(1500 * time.Millisecond)
			for _, name := range []string{".envrc", "plain"} {
				if b, err := os.ReadFile(filepath.Join(work, name)); err == nil {
					t.Errorf("%s written after the command ended: %q", name, b)
				}
			}
			// Legitimate use: the next command runs as before.
			if res, err := l.Exec(t.Context(), sandbox.Cmd{Script: "echo next", Dir: work, Timeout: 20 * time.Second}); err != nil || res.Stdout != "next\n" {
				t.Fatalf("next command: %q, %v", res.Stdout, err)
			}
		})
	}
}
