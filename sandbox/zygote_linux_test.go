//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
	"golang.org/x/sys/unix"
)

// newZygoteExecutor returns a landlock executor (zygote mode) for a fresh
// work dir, closed at the end of the test.
func newZygoteExecutor(t *testing.T, l *Landlock) (*Landlock, string) {
	t.Helper()
	_, err := LandlockStatus()
	testenv.Need(t, "landlock", err)
	work := t.TempDir()
	l.WorkDir = work
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l, work
}

// mustExec runs script and returns its stdout, failing the test unless it
// exits 0.
func mustExec(t *testing.T, l *Landlock, dir, script string, env ...string) string {
	t.Helper()
	res, err := l.Exec(t.Context(), Cmd{Script: script, Dir: dir, Env: append(MinimalEnv(), env...), Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%q: %v, exit %d\nstdout: %s\nstderr: %s", script, err, res.ExitCode, res.Stdout, res.Stderr)
	}
	return res.Stdout
}

// zygotePID returns the pid of the shell's parent, which is the zygote.
func zygotePID(t *testing.T, l *Landlock, dir string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(mustExec(t, l, dir, "echo $PPID")))
	if err != nil || pid <= 1 || pid == os.Getpid() {
		t.Fatalf("parent of the shell: %d, %v; want the zygote", pid, err)
	}
	return pid
}

// gone reports whether pid has ended (or is a zombie), waiting up to 10 s.
func gone(pid int) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if _, rest, ok := strings.Cut(string(b), ") "); ok && strings.HasPrefix(rest, "Z") {
			return true
		}
	}
	return false
}

// noticedDead waits until l's zygote is marked dead, as rein marks it when
// the zygote's socket closes.
func noticedDead(l *Landlock) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		l.state.zmu.Lock()
		z := l.state.zyg
		l.state.zmu.Unlock()
		if z == nil || !z.alive() {
			return true
		}
	}
	return false
}

// waitFile waits for path to hold something and returns it.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return string(b)
		}
	}
	t.Fatalf("%s never written", path)
	return ""
}

// One zygote serves many commands, a fork bomb among them, and each
// command is its shell's own: the zygote is the parent of every one.
func TestZygoteServesManyCommands(t *testing.T) {
	l, work := newZygoteExecutor(t, &Landlock{MaxProcs: 64})
	first := zygotePID(t, l, work)
	for i := range 200 {
		if got := mustExec(t, l, work, `echo "$N"`, "N="+strconv.Itoa(i)); got != strconv.Itoa(i)+"\n" {
			t.Fatalf("command %d printed %q", i, got)
		}
	}
	probe := filepath.Join(work, "probe")
	copyFile(t, os.Args[0], probe)
	res, err := l.Exec(t.Context(), Cmd{Script: `REIN_SANDBOX_PROBE=fork ./probe 1000`, Dir: work, Timeout: time.Minute})
	if err != nil || !strings.Contains(res.Stdout, "started ") {
		t.Fatalf("fork bomb: %v %+v", err, res)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(res.Stdout, "started ")))
	if n >= 64 {
		t.Errorf("the bomb started %d processes under a limit of 64", n)
	}
	if last := zygotePID(t, l, work); last != first {
		t.Errorf("the zygote changed from %d to %d: it did not survive", first, last)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Commands run at once on one executor, each with its own input and
// output, and none can signal another: each has a Landlock domain of its
// own, as with a helper per command.
func TestZygoteConcurrentCommands(t *testing.T) {
	l, work := newZygoteExecutor(t, &Landlock{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				in := fmt.Sprintf("g%d-i%d", g, i)
				res, err := l.Exec(t.Context(), Cmd{Script: `cat; echo " $$" >&2`, Dir: work, Stdin: in, Timeout: time.Minute})
				if err != nil || res.ExitCode != 0 || res.Stdout != in {
					t.Errorf("%s: %v, exit %d, stdout %q", in, err, res.ExitCode, res.Stdout)
				}
			}
		})
	}
	wg.Wait()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := l.Exec(ctx, Cmd{Script: `echo $$ > a.tmp; mv a.tmp a.pid; exec sleep 100`, Dir: work, Timeout: time.Minute})
		done <- err
	}()
	a := strings.TrimSpace(waitFile(t, filepath.Join(work, "a.pid")))
	attack := Cmd{Script: `kill -0 ` + a + ` && echo ESCAPED || echo refused`, Dir: work, Timeout: time.Minute}
	res, err := l.Exec(t.Context(), attack)
	if err != nil || res.Stdout != "refused\n" {
		t.Errorf("signalling a sibling command: %v, stdout %q, stderr %q; want refused", err, res.Stdout, res.Stderr)
	}
	res, err = (&Local{}).Exec(t.Context(), attack) // the control: without the sandbox it gets through
	if err != nil || res.Stdout != "ESCAPED\n" {
		t.Errorf("control: %v, stdout %q; the attack fails even unsandboxed, so the test shows nothing", err, res.Stdout)
	}
	cancel()
	if err := <-done; !errors.Is(err, ErrAborted) {
		t.Errorf("cancelled command: %v, want ErrAborted", err)
	}
	pid, _ := strconv.Atoi(a)
	if !gone(pid) {
		t.Errorf("the cancelled command %d still runs", pid)
	}
}

// A zygote killed from outside ends the command in flight (Exec fails with
// ErrStart, the command is dead), and the next command gets a new zygote,
// confined as the first: never an unconfined run.
func TestZygoteKilledFromOutside(t *testing.T) {
	l, work := newZygoteExecutor(t, &Landlock{Restarts: 2})
	first := zygotePID(t, l, work)
	done := make(chan error, 1)
	go func() {
		_, err := l.Exec(t.Context(), Cmd{Script: `sleep 100 & echo $! > b.tmp; echo $$ >> b.tmp; mv b.tmp b.pid; wait`, Dir: work, Timeout: time.Minute})
		done <- err
	}()
	pids := strings.Fields(waitFile(t, filepath.Join(work, "b.pid")))
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "zygote died") {
		t.Errorf("in-flight command when the zygote died: %v, want ErrStart saying so", err)
	}
	for _, p := range pids {
		pid, _ := strconv.Atoi(p)
		if !gone(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d of the command outlived its zygote", pid)
		}
	}
	second := zygotePID(t, l, work)
	if second == first {
		t.Fatalf("still zygote %d after it was killed", first)
	}
	// The new zygote confines as the old one did.
	if out := mustExec(t, l, work, `cat /etc/shadow 2>/dev/null || echo confined`); out != "confined\n" {
		t.Errorf("after the restart: %q", out)
	}
	// Killed while idle: the next command restarts it too.
	if err := syscall.Kill(second, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Idle means rein has seen it go: a Go zygote's leader shows as a zombie
	// while its other threads still hold the socket open, and a command sent
	// in that window reaches a zygote that is still exiting (Exec fails with
	// ErrStart and does not resend it: something may have begun).
	if !gone(second) || !noticedDead(l) {
		t.Fatalf("zygote %d killed, but rein has not seen it end", second)
	}
	if third := zygotePID(t, l, work); third == second || third == first {
		t.Errorf("zygote %d after killing %d", third, second)
	}
}

// A command sent right as the zygote is killed meets it alive, dying or
// dead. Each way it either runs confined on a new zygote or fails with
// ErrStart: never unconfined, never hung, and the command after it runs.
func TestZygoteKilledAsCommandArrives(t *testing.T) {
	l, work := newZygoteExecutor(t, &Landlock{Restarts: 100})
	confined, failed := 0, 0
	for range 20 {
		pid := zygotePID(t, l, work)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		res, err := l.Exec(t.Context(), Cmd{Script: `cat /etc/shadow 2>/dev/null || echo confined`, Dir: work, Timeout: time.Minute})
		switch {
		case err == nil && res.Stdout == "confined\n":
			confined++
		case errors.Is(err, ErrStart):
			failed++
			if failed == 1 {
				t.Logf("refused: %v", err)
			}
		default:
			t.Fatalf("command as the zygote died: %v, stdout %q", err, res.Stdout)
		}
	}
	t.Logf("ran confined on a new zygote %d times, refused to start %d times", confined, failed)
	if out := mustExec(t, l, work, `echo after`); out != "after\n" {
		t.Errorf("the command after: %q", out)
	}
}

// A command has no descriptor but stdin, stdout and stderr: it cannot write
// to the zygote's control socket to have something run outside its
// limits. The probe that tries (every socket it holds) does reach a
// control socket leaked to it: that is the control.
func TestZygoteControlSocketUnreachable(t *testing.T) {
	l, work := newZygoteExecutor(t, &Landlock{})
	probe := filepath.Join(work, "probe")
	copyFile(t, os.Args[0], probe)
	target := filepath.Join(work, "escaped")

	// The control: a socket leaked to the probe gets a well-formed run frame.
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	defer ours.Close()
	cmd := exec.CommandContext(t.Context(), probe, target)
	cmd.Env = []string{"REIN_SANDBOX_PROBE=control-socket"}
	cmd.ExtraFiles = []*os.File{theirs}
	// To a file, not a pipe: the probe passes its stdout on in the frame,
	// and a pipe end held in the socket's queue would never see EOF.
	outFile, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	cmd.Stdout, cmd.Stderr = outFile, outFile
	err = cmd.Run()
	theirs.Close()
	if err != nil {
		out, _ := os.ReadFile(outFile.Name())
		t.Fatalf("control probe with a leaked socket: %v\n%s", err, out)
	}
	c, err := net.FileConn(ours)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(runFDs*4))
	n, oobn, _, _, err := c.(*net.UnixConn).ReadMsgUnix(buf, oob)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := parseRights(oob[:oobn]); err != nil || len(got) != runFDs {
		t.Errorf("control: descriptors %v, %v", got, err)
	} else {
		closeFDs(got)
	}
	fb := frameBuf{buf: buf[:n]}
	f, ok, err := fb.next()
	if err != nil || !ok || f.typ != frameRun {
		t.Fatalf("control: frame %v %v %v", f, ok, err)
	}
	if req, err := decodeRunRequest(f.body); err != nil || !strings.Contains(strings.Join(req.argv, " "), target) {
		t.Fatalf("control: the probe's request %+v, %v", req, err)
	}

	// In the sandbox: no socket to talk to, nothing created.
	res, err := l.Exec(t.Context(), Cmd{Script: `./probe "$T"; ls /proc/self/fd | sort -n | tr '\n' ' '`, Dir: work, Env: []string{"REIN_SANDBOX_PROBE=control-socket", "T=" + target}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stdout, "sent") || !strings.Contains(res.Stdout, "refused") {
		t.Errorf("the command found a socket to talk to:\n%s\n%s", res.Stdout, res.Stderr)
	}
	// ls's own directory descriptor is 3; nothing else is open.
	if !strings.HasSuffix(res.Stdout, "\n0 1 2 3 ") {
		t.Errorf("descriptors of a command: %q, want only 0 1 2 (and ls's 3)", res.Stdout)
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("%s was created: the zygote ran the command's request", target)
	}
}

// A command cannot execute the rein binary its zygote runs from: the
// zygote's extra grant is not in the command's nested Landlock domain.
func TestZygoteCommandCannotRunHelper(t *testing.T) {
	l, work := newZygoteExecutor(t, &Landlock{})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Exec(t.Context(), Cmd{Script: `"$SELF" -test.list=NONE; echo "exit $?"`, Dir: work, Env: []string{"SELF=" + self}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "exit 126\n" {
		t.Errorf("running %s inside: stdout %q, stderr %q; want exit 126 (permission denied)", self, res.Stdout, res.Stderr)
	}
}

// The zygote refuses to serve when it was not started confined: here in
// rein's own network namespace, and in a namespace of its own but without
// the rest of the confinement.
func TestZygoteRefusesUnconfined(t *testing.T) {
	_, err := LandlockStatus()
	testenv.Need(t, "landlock", err)
	netns, err := netnsID("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		attr  syscall.SysProcAttr
		wants string
	}{
		{"host network", syscall.SysProcAttr{}, "network namespace"},
		{"no other restriction", namespaceAttr(false), "not confined"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
			defer ours.Close()
			rs, err := newRuleset(systemGrants(baseGrants(), t.TempDir(), t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			ruleset := os.NewFile(uintptr(rs), "ruleset")
			defer ruleset.Close()
			cmd := exec.CommandContext(t.Context(), os.Args[0], HelperArg, zygoteArg, "-control-fd", "3", "-ruleset-fd", "4", "-netns", netns)
			cmd.ExtraFiles = []*os.File{theirs, ruleset}
			cmd.SysProcAttr = &c.attr
			out, err := cmd.CombinedOutput()
			theirs.Close()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 126 || !strings.Contains(string(out), c.wants) {
				t.Errorf("unconfined zygote: %v\n%s\nwant exit 126 and %q", err, out, c.wants)
			}
			b := make([]byte, 64)
			if n, _ := ours.Read(b); n != 0 {
				t.Errorf("the unconfined zygote said %q: it must never report ready", b[:n])
			}
		})
	}
}

// Through the old path too (a helper per command), the basics hold.
func TestLandlockPerCommand(t *testing.T) {
	l, work := newZygoteExecutor(t, &Landlock{PerCommand: true, MaxProcs: 64})
	if out := mustExec(t, l, work, `cat /etc/shadow 2>/dev/null || echo confined; echo "$X"`, "X=x"); out != "confined\nx\n" {
		t.Errorf("stdout %q", out)
	}
	if out := mustExec(t, l, work, "echo $PPID"); out != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("the shell's parent is %q, want rein (%d): not a helper per command", out, os.Getpid())
	}
}
