//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reaperArg, right after HelperArg, makes the helper serve as the local
// executor's reaper: `rein __rein-sandbox-helper -reaper -- SHELL -c
// SCRIPT`. The reaper is a child subreaper, so every process the shell
// starts that loses its parent (a double fork, `setsid … &`, `nohup …
// &`) is re-parented to it rather than to init, and it can find them all
// by walking /proc/<pid>/task/*/children from itself. It kills them all
// when the shell exits, when rein asks (SIGUSR1), and when rein dies,
// however it dies: its parent-death signal is SIGUSR1, and the control
// pipe rein holds (fd 4) reads EOF.
//
// Descriptors: 0–2 are the command's, passed to the shell; 3 is the
// status pipe (statusReady once the shell started); 4 the control pipe.
// The environment is encodeEnv's, so nothing in the command's environment
// acts on the reaper's Go runtime.
const reaperArg = "-reaper"

// Signals between rein and the reaper.
const (
	// reaperKill asks the reaper to kill every process of the command at
	// once and exit; it is also the reaper's parent-death signal.
	reaperKill = syscall.SIGUSR1
	// reaperKillWait bounds how long rein waits for the reaper to have
	// done so before it kills the reaper's group itself.
	reaperKillWait = 2 * time.Second
	// reaperSweepMax bounds how long the reaper keeps killing (a fork bomb
	// forking faster than it is killed).
	reaperSweepMax = 10 * time.Second
)

// reaperMain is the reaper; it returns the exit code, which is the shell's
// (when a signal killed the shell, the reaper dies of the same signal).
func reaperMain(args []string) int {
	status := os.NewFile(3, "status")
	control := os.NewFile(4, "control")
	for _, fd := range []int{3, 4} {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
			return helperFail(nil, 126, fmt.Errorf("reaper: descriptor %d: %w", fd, err))
		}
	}
	if len(args) < 2 || args[0] != "--" || !filepath.IsAbs(args[1]) {
		return helperFail(status, 126, fmt.Errorf("reaper: want -- /PATH/TO/SHELL ARG..., got %q", args))
	}
	argv := args[1:]
	env, err := decodeEnv(os.Environ())
	if err != nil {
		return helperFail(status, 126, err)
	}
	// Before the shell exists: then nothing can be lost to a signal that
	// comes first (the Go runtime's default for SIGUSR1 is to exit).
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, reaperKill, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return helperFail(status, 126, fmt.Errorf("reaper: PR_SET_CHILD_SUBREAPER: %w", err))
	}
	parent := os.Getppid()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(reaperKill), 0, 0, 0); err != nil {
		return helperFail(status, 126, fmt.Errorf("reaper: PR_SET_PDEATHSIG: %w", err))
	}
	if parent == 1 || !alive(parent) {
		return helperFail(status, 126, errors.New("reaper: rein is gone"))
	}
	dir, _ := os.Getwd()
	shell, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		code := 126
		if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return helperFail(status, code, fmt.Errorf("reaper: starting %s: %w", argv[0], err))
	}
	if _, err := status.Write([]byte{statusReady}); err != nil {
		killTree()
		return 126
	}
	status.Close()

	exited := make(chan syscall.WaitStatus, 1)
	go reapAll(shell.Pid, exited)
	gone := make(chan struct{})
	go func() {
		var b [1]byte
		_, _ = control.Read(b[:]) // EOF: rein closed it or died
		close(gone)
	}()
	for {
		select {
		case ws := <-exited:
			// The shell's end is the command's: whatever it left behind,
			// in its group or out of it, goes with it.
			killTree()
			return exitAs(ws)
		case <-gone:
			killTree()
			return dieKilled()
		case sig := <-sigs:
			if sig == reaperKill {
				killTree()
				return dieKilled()
			}
			// SIGTERM and the like came to the whole group (a timeout):
			// the shell got it too and decides.
		}
	}
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// dieKilled ends the reaper by SIGKILL, as the shell would have ended had
// rein killed its group itself.
func dieKilled() int {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// reapAll reaps every child of the reaper, the shell and every orphan
// re-parented to it, and sends the shell's wait status on exited.
func reapAll(shell int, exited chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil: // ECHILD: nothing left to reap for now
			time.Sleep(5 * time.Millisecond)
			continue
		case pid == shell:
			exited <- ws
		}
	}
}

// exitAs ends the reaper the way the shell ended: with its exit code, or
// killed by the same signal, so rein reads the same wait status as when
// it ran the shell itself.
func exitAs(ws syscall.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	sig := ws.Signal()
	signal.Reset(sig)
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, 0, 0, 0, 0)
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second) // a signal whose default is to ignore it, or a stop
	return 128 + int(sig)
}

// killTree SIGKILLs every descendant of the reaper until none is left.
// Each round lists the tree afresh: a process forked between two rounds,
// or orphaned by a kill, is found in the next (orphans come to the reaper,
// a subreaper). The reaper's children are reaped by reapAll meanwhile.
func killTree() {
	deadline := time.Now().Add(reaperSweepMax)
	self := os.Getpid()
	for time.Now().Before(deadline) {
		pids := descendants(self)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(time.Millisecond) // let the kills land and reapAll reap
	}
}

// descendants lists the live (not zombie) descendants of pid. It reads
// /proc/PID/task/*/children, or, on a kernel without it, every
// /proc/PID/stat's parent.
func descendants(root int) []int {
	var out []int
	queue := []int{root}
	fallback := false
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		kids, ok := children(pid)
		if !ok {
			fallback = true
			break
		}
		for _, k := range kids {
			if !zombie(k) {
				out = append(out, k)
			}
			queue = append(queue, k)
		}
	}
	if fallback {
		return descendantsByStat(root)
	}
	return out
}

// children lists pid's children from /proc/PID/task/*/children; false
// when the kernel has no such file.
func children(pid int) ([]int, bool) {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil, true // gone
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name()); serr == nil {
				return nil, false // the task is there, its children file is not
			}
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, true
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	st, err := procStat(pid)
	return err == nil && st.state == 'Z'
}

type statLine struct {
	state byte
	ppid  int
}

// procStat reads the state and the parent of pid from /proc/PID/stat.
func procStat(pid int) (statLine, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return statLine{}, err
	}
	// pid (comm) state ppid …; comm may hold anything, so cut at the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return statLine{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return statLine{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return statLine{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return statLine{state: f[0][0], ppid: ppid}, nil
}

// descendantsByStat is descendants for a kernel without the children
// files: one pass over /proc builds the parent map.
func descendantsByStat(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	kids := map[int][]int{}
	zombies := map[int]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procStat(pid)
		if err != nil {
			continue
		}
		kids[st.ppid] = append(kids[st.ppid], pid)
		zombies[pid] = st.state == 'Z'
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			if !zombies[k] {
				out = append(out, k)
			}
			queue = append(queue, k)
		}
	}
	return out
}
