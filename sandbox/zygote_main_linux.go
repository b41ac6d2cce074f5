//go:build linux

package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// zygoteArg, right after HelperArg, makes the helper serve as a landlock
// executor's zygote instead of confining itself and running one program.
const zygoteArg = "-zygote"

// The zygote is how the landlock backend runs a command without starting a
// Go program for it. It is the rein binary, exec'd by the helper from the
// helper's confined thread, so every thread of it is born with what the
// helper applied: the network namespace, the pids cgroup and limits, no
// capabilities, no_new_privs, the executor's Landlock domain and the seccomp
// filter. It reads run frames from rein and, for each, on an OS thread it
// locks for the command's life: forks a child that enters a nested Landlock
// domain made from the commands' ruleset and execs the shell in a new
// session with the descriptors rein passed (forkConfined: the domain is the
// child's alone, so a command can signal or inspect neither the zygote, any
// of its threads, nor another command, and cannot reach the rein binary the
// zygote runs from), reports the pid on the command's status pipe, waits for
// the shell to exit, kills its process group while the shell is still
// unreaped (so the group id cannot have been reused), reaps it and reports
// the wait status on the pipe. A signal frame signals a command's group,
// only while its shell is unreaped.
//
// Every descriptor of the zygote is close-on-exec (the control socket,
// every descriptor received), so a command gets only stdin, stdout and
// stderr and can never write to the control socket. When the socket closes
// (rein closed the executor or died) or rein's death signal (SIGTERM)
// arrives, the zygote kills every process any command started — those that
// left the process group or the session too — and exits: kill(-1) from the
// zygote reaches exactly the processes in the commands' domains, as the
// Landlock signal scope (checked before serving) keeps every other process
// out of its reach.
func zygoteMain(args []string) int {
	fs := flag.NewFlagSet(zygoteArg, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	control := fs.Int("control-fd", -1, "the control socket")
	ruleset := fs.Int("ruleset-fd", -1, "the commands' Landlock ruleset")
	netns := fs.String("netns", "", "rein's network namespace")
	stageWork := fs.String("stage-work", "", "the work dir, when commands are staged")
	if err := fs.Parse(args); err != nil {
		return helperFail(nil, 126, fmt.Errorf("zygote arguments: %w", err))
	}
	if !validFDs(*control, *ruleset) || *control < 0 || *ruleset < 0 || !validNetns(*netns) || fs.NArg() != 0 {
		return helperFail(nil, 126, errors.New("zygote arguments: need -control-fd, -ruleset-fd and -netns"))
	}
	for _, fd := range []int{*control, *ruleset} {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
			return helperFail(nil, 126, fmt.Errorf("zygote descriptor %d: %w", fd, err))
		}
	}
	if err := zygoteSelfCheck(*netns); err != nil {
		return helperFail(nil, 126, err)
	}
	// Not dumpable: nothing of the zygote's user may read its memory or
	// descriptors through /proc, on top of Landlock's ptrace scoping.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return helperFail(nil, 126, fmt.Errorf("zygote: not dumpable: %w", err))
	}
	f := os.NewFile(uintptr(*control), "zygote-control")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return helperFail(nil, 126, fmt.Errorf("zygote control socket: %w", err))
	}
	conn, ok := c.(*net.UnixConn)
	if !ok {
		return helperFail(nil, 126, errors.New("zygote control descriptor is not a unix socket"))
	}
	s := &zygoteServer{conn: conn, ruleset: *ruleset, cmds: map[uint64]*zchild{}, jobs: make(chan zjob)}
	if *stageWork != "" {
		s.overlay = &overlayRule{work: *stageWork}
	}
	// rein's death signal: the zygote outlives rein only long enough to
	// kill what the commands started.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-term
		sweep()
		os.Exit(0)
	}()
	go s.worker()
	if err := s.send(frameReady, 0, nil); err != nil {
		return helperFail(nil, 126, err)
	}
	err = s.serve()
	s.killAll()
	sweep()
	if err != nil && !errors.Is(err, io.EOF) {
		return helperFail(nil, 125, err)
	}
	return 0
}

// zygoteSelfCheck makes sure the zygote was born confined before it serves:
// outside rein's network namespace, no_new_privs, a seccomp filter, no
// capability, Landlock's signal scope (rein cannot be signalled) and a
// Landlock domain (which refuses to list "/", a directory no grant ever
// covers).
func zygoteSelfCheck(reinNetns string) error {
	if id, err := netnsID("/proc/self/ns/net"); err != nil {
		return err
	} else if id == reinNetns {
		return errors.New("zygote: still in rein's network namespace")
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return fmt.Errorf("zygote: %w", err)
	}
	want := map[string]func(string) bool{
		"NoNewPrivs": func(v string) bool { return v == "1" },
		"Seccomp":    func(v string) bool { return v == "2" },
		"CapPrm":     func(v string) bool { return strings.Trim(v, "0") == "" },
		"CapEff":     func(v string) bool { return strings.Trim(v, "0") == "" },
	}
	for line := range strings.Lines(string(status)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if ok, known := want[k]; known {
			if !ok(strings.TrimSpace(v)) {
				return fmt.Errorf("zygote: not confined: %s is %q", k, strings.TrimSpace(v))
			}
			delete(want, k)
		}
	}
	if len(want) != 0 {
		return fmt.Errorf("zygote: /proc/self/status lacks %d of the fields checked", len(want))
	}
	// rein, the parent, runs as the same user outside any Landlock domain:
	// only the signal scope can refuse this. Without it sweep would reach
	// every process of the user.
	if err := unix.Kill(os.Getppid(), 0); !errors.Is(err, unix.EPERM) {
		return fmt.Errorf("zygote: not confined: signalling rein gave %v, not EPERM, so Landlock's signal scope is not in force", err)
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return errors.New("zygote: not confined: / is readable, so no Landlock domain is in force")
	}
	if !errors.Is(err, unix.EACCES) {
		return fmt.Errorf("zygote: checking Landlock: %w", err)
	}
	return nil
}

// zygoteServer is the zygote's state.
type zygoteServer struct {
	conn    *net.UnixConn
	ruleset int
	wmu     sync.Mutex // serialises writes to conn
	mu      sync.Mutex
	cmds    map[uint64]*zchild // running commands by id
	wg      sync.WaitGroup     // the commands' goroutines
	jobs    chan zjob          // to the spare worker
	overlay *overlayRule       // when commands are staged

	// sweepMu orders sweeps and starts: active counts the commands
	// started or starting, and a sweep runs only at zero, so it never
	// kills a command of its own.
	sweepMu sync.Mutex
	active  int
}

// zjob is a command for a worker.
type zjob struct {
	id  uint64
	req runRequest
	std [runFDs]int
}

// zchild is one running command.
type zchild struct {
	mu     sync.Mutex
	pid    int
	reaped bool
}

// signal signals c's process group while its leader is unreaped.
func (c *zchild) signal(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped {
		_ = syscall.Kill(-c.pid, sig) // ESRCH: gone already
	}
}

func (s *zygoteServer) send(typ frameType, id uint64, body []byte) error {
	b := appendFrame(nil, typ, id, body)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.conn.Write(b); err != nil {
		return fmt.Errorf("zygote: writing to rein: %w", err)
	}
	return nil
}

// serve reads frames until the socket closes.
func (s *zygoteServer) serve() error {
	var fb frameBuf
	var fds []int // received, not yet taken by a run frame
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(16*4))
	for {
		n, oobn, flags, _, err := s.conn.ReadMsgUnix(buf, oob) // MSG_CMSG_CLOEXEC on Linux
		if oobn > 0 {
			got, perr := parseRights(oob[:oobn])
			fds = append(fds, got...)
			if perr != nil {
				return perr
			}
		}
		if flags&unix.MSG_CTRUNC != 0 {
			return errors.New("zygote: descriptors truncated")
		}
		fb.buf = append(fb.buf, buf[:n]...)
		for {
			f, ok, ferr := fb.next()
			if ferr != nil {
				return ferr
			}
			if !ok {
				break
			}
			switch f.typ {
			case frameRun:
				if len(fds) < runFDs {
					return errors.New("zygote protocol: a run frame without its descriptors")
				}
				var std [runFDs]int
				copy(std[:], fds)
				fds = fds[runFDs:]
				req, rerr := decodeRunRequest(f.body)
				if rerr != nil {
					closeFDs(std[:])
					return rerr
				}
				s.wg.Add(1)
				s.jobs <- zjob{f.id, req, std}
			case frameSignal:
				sig, serr := bodyUint32(f.body)
				if serr != nil {
					return serr
				}
				s.mu.Lock()
				c := s.cmds[f.id]
				s.mu.Unlock()
				if c != nil {
					c.signal(syscall.Signal(sig))
				}
			default:
				return fmt.Errorf("zygote protocol: unexpected frame %q", f.typ)
			}
		}
		if err != nil {
			return err
		}
	}
}

// parseRights returns the descriptors in a control message.
func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("zygote: control message: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			closeFDs(fds)
			return nil, fmt.Errorf("zygote: control message: %w", err)
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// worker runs one command on an OS thread of its own. It locks the thread
// before the command comes, and starts the next worker as soon as it has
// one, so that no command waits for a thread to be made. The command's
// parent-death signal follows the thread that forked it, so the thread
// stays locked until the command is reaped; nothing else of the command
// stays on it.
func (s *zygoteServer) worker() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	j := <-s.jobs
	go s.worker()
	s.run(j.id, j.req, j.std)
}

// run runs one command from the calling thread; see zygoteMain. It answers on the command's status pipe, std[3].
func (s *zygoteServer) run(id uint64, req runRequest, std [runFDs]int) {
	defer s.wg.Done()
	status := std[3]
	defer unix.Close(status)
	answer := func(typ frameType, body []byte) error {
		b := appendFrame(nil, typ, id, body)
		for len(b) > 0 {
			n, err := unix.Write(status, b)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	}
	s.sweepMu.Lock()
	s.active++
	s.sweepMu.Unlock()
	pid, err := s.start(req, std)
	closeFDs(std[:3])
	if err != nil {
		s.sweepMu.Lock()
		s.active--
		s.sweepMu.Unlock()
		typ := frameFailed
		if errors.Is(err, errExecFailed) {
			typ = frameNoExec
		}
		_ = answer(typ, []byte(err.Error()))
		return
	}
	c := &zchild{pid: pid}
	s.mu.Lock()
	s.cmds[id] = c
	s.mu.Unlock()
	if err := answer(frameStarted, uint32Body(uint32(pid))); err != nil {
		c.signal(syscall.SIGKILL) // nobody waits for it
	}
	waitExited(pid)
	c.mu.Lock()
	_ = syscall.Kill(-pid, syscall.SIGKILL) // what the shell left in its group
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	c.reaped = true
	c.mu.Unlock()
	s.mu.Lock()
	delete(s.cmds, id)
	s.mu.Unlock()
	s.sweepIfLast()
	_ = answer(frameDone, uint32Body(uint32(ws)))
}

// sweepIfLast kills what the commands left (processes that left their
// group or session: a daemon, a double fork) once no other command runs,
// before the last one is reported done: so nothing they left can write
// after rein has compared the work dir (the watch) or detached a staged
// command's overlay, whose absolute paths then lead to the work dir
// itself. The executor's pids cgroup, where there is one, is swept by rein
// as well; without one (rein not root) this is the only sweep. While
// another command runs they are left until it ends too: a sweep cannot
// tell whose they are.
func (s *zygoteServer) sweepIfLast() {
	s.sweepMu.Lock()
	defer s.sweepMu.Unlock()
	if s.active--; s.active == 0 {
		sweep()
	}
}

// start starts the command; the child enters the commands' Landlock
// domain between its fork and its exec (see forkConfined), so no thread of
// the zygote ever shares a domain with a command.
func (s *zygoteServer) start(req runRequest, std [runFDs]int) (int, error) {
	if s.overlay != nil {
		if err := s.overlay.add(s.ruleset); err != nil {
			return 0, err
		}
	}
	pid, err := startConfined(req.path, req.argv, req.env, req.dir, [3]int{std[0], std[1], std[2]}, s.ruleset)
	if err != nil {
		return 0, fmt.Errorf("sandbox: starting %s in %s: %w", req.path, req.dir, err)
	}
	return pid, nil
}

// killAll kills every running command's group, again until every
// command's goroutine has reaped its shell (a command may still be
// registering when the socket closes).
func (s *zygoteServer) killAll() {
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	for {
		s.mu.Lock()
		for _, c := range s.cmds {
			c.signal(syscall.SIGKILL)
		}
		s.mu.Unlock()
		select {
		case <-done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// sweep kills every process the zygote may signal: with the Landlock
// signal scope that zygoteSelfCheck found in force, those in the domains
// nested in the zygote's, which are its commands and everything they
// started, however they left their group or session. kill(-1) spares the
// caller itself.
func sweep() {
	_ = unix.Kill(-1, unix.SIGKILL) // ESRCH: nothing left
}
