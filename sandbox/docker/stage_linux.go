package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reinhq/rein/sandbox"
	"golang.org/x/sys/unix"
)

// nsState is what rein holds inside one container's namespaces: a thread
// in its mount namespace that mounts each staged command's overlay, and
// the egress proxy's listener in its network namespace. Both are made
// from rein's side, as root, by entering the namespaces of the
// container's init (setns): nothing runs in the container for them, and
// the container keeps every capability dropped.
type nsState struct {
	mnt    *sandbox.NSThread // nil when commands are not staged
	cancel context.CancelFunc
	served chan error // the proxy's Serve; nil without egress
	// cgroup is the container's cgroup directory ("" when unknown) and
	// init its init's pid: after each staged command every process in it
	// but the init and its `sleep infinity` is killed (sweep).
	cgroup string
	init   int
}

// sweep kills what a staged command left running in the container, also
// what left its process group and session (setsid): a process that
// outlived its command would write straight to the work dir between
// commands, unstaged, or into a later command's overlay. It keeps the
// init and whatever runs as initUser (the `sleep infinity`): commands run
// as the user's uid with no capability and no-new-privileges, so none can
// become initUser.
func (n *nsState) sweep() {
	if n.cgroup == "" {
		return
	}
	keep := []int{n.init}
	b, _ := os.ReadFile(filepath.Join(n.cgroup, "cgroup.procs"))
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && uidOf(pid) == initUID {
			keep = append(keep, pid)
		}
	}
	sandbox.KillInCgroupBut(n.cgroup, keep...)
}

// initUID is initUser's uid.
const initUID = 65534

// uidOf returns pid's real uid, or -1.
func uidOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if u, err := strconv.Atoi(f[0]); err == nil {
					return u
				}
			}
		}
	}
	return -1
}

func (n *nsState) close() {
	if n == nil {
		return
	}
	if n.mnt != nil {
		n.mnt.Close()
	}
	if n.served != nil {
		n.cancel()
		<-n.served
	}
}

// stageSupported says why this process cannot stage a container's
// commands, or nil.
func stageSupported() error {
	if os.Geteuid() != 0 {
		return errors.New("staging the docker backend's commands needs rein to run as root (rein mounts each command's overlay in the container's mount namespace); commands write straight to the work dir")
	}
	return sandbox.OverlayFDStatus()
}

// egressSupported says why this process cannot give a container the
// egress proxy, or nil.
func egressSupported() error {
	if os.Geteuid() != 0 {
		return errors.New("[sandbox.network] allow with the docker backend needs rein to run as root (rein listens for the egress proxy inside the container's network namespace); remove the allowlist to run commands without network")
	}
	return nil
}

// initStage makes the stage root, where each command's upper dir goes:
// outside the work dir, and never in the container.
func (e *Executor) initStage() error {
	if err := stageSupported(); err != nil {
		return err
	}
	// Held (sandbox.MakeHeld): a rein killed mid-command leaves its last
	// command's writes here, for the next executor's sweep to remove.
	dir, lock, err := sandbox.MakeHeld("docker-stage")
	if err != nil {
		return fmt.Errorf("stage root: %w", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil || within(real, e.src) || within(e.src, real) {
		_ = os.RemoveAll(dir)
		_ = lock.Close()
		return fmt.Errorf("stage root %s cannot hold upper dirs for %s", dir, e.src)
	}
	e.stageRoot, e.stageLock = real, lock
	return nil
}

// enter opens the namespaces of container id's init and starts what rein
// serves there: the mount thread when commands are staged, the egress
// proxy when one is configured. A mount thread that cannot start turns
// staging off (StageErr says why); a proxy that cannot is an error.
func (e *Executor) enter(ctx context.Context, id string) (*nsState, error) {
	stage := e.stageRoot != "" && e.stageErrNow() == nil
	if !stage && e.opts.Egress == nil {
		return nil, nil
	}
	pid, err := e.initPID(ctx, id)
	if err != nil {
		return nil, err
	}
	open := func(kind string) (*os.File, error) {
		f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/" + kind)
		if err != nil {
			return nil, fmt.Errorf("the container's %s namespace: %w", kind, err)
		}
		return f, nil
	}
	mnt, err := open("mnt")
	if err != nil {
		return nil, err
	}
	defer mnt.Close()
	netns, err := open("net")
	if err != nil {
		return nil, err
	}
	defer netns.Close()
	// The pid was the container's init when the namespaces were opened
	// only if it still is now (a pid is reused only once it is free).
	if again, err := e.initPID(ctx, id); err != nil || again != pid {
		return nil, fmt.Errorf("the container's init changed while its namespaces were opened")
	}
	if err := notOurs(mnt, netns); err != nil {
		return nil, err
	}
	n := &nsState{}
	if stage {
		if n.mnt, err = sandbox.NewNSThread(mnt); err != nil {
			e.stageFailed(err)
		}
		n.init = pid
		if f := sandbox.OOMKillsFile(pid); f != "" {
			n.cgroup = filepath.Dir(f)
		}
	}
	if e.opts.Egress != nil {
		ln, err := sandbox.ListenProxyIn(netns)
		if err != nil {
			n.close()
			return nil, fmt.Errorf("the egress proxy in the container: %w", err)
		}
		sctx, cancel := context.WithCancel(context.Background())
		n.cancel, n.served = cancel, make(chan error, 1)
		go func() { n.served <- e.opts.Egress.Serve(sctx, ln) }()
	}
	return n, nil
}

// initPID returns the host pid of container id's init.
func (e *Executor) initPID(ctx context.Context, id string) (int, error) {
	ictx, cancel := context.WithTimeout(ctx, signalTimeout)
	defer cancel()
	out, err := e.run(ictx, "inspect", "--format", "{{.State.Pid}}", id)
	if err != nil {
		return 0, fmt.Errorf("the container's process: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("the container's process: %s printed %q", e.name, strings.TrimSpace(out))
	}
	return pid, nil
}

// notOurs refuses namespaces that are rein's own: a runtime that shares
// the host's (rootless podman seen from outside, say) would have rein
// mount over the host's work dir or listen on the host's loopback.
func notOurs(files ...*os.File) error {
	for _, f := range files {
		kind := filepath.Base(f.Name())
		var a, b unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &a); err != nil {
			return err
		}
		if err := unix.Stat("/proc/self/ns/"+kind, &b); err != nil {
			return err
		}
		if a.Ino == b.Ino && a.Dev == b.Dev {
			return fmt.Errorf("the container shares rein's %s namespace; refusing to stage or proxy in it", kind)
		}
	}
	return nil
}

// execStaged runs c with the work dir under a fresh overlay in the
// container and returns the result with its writes staged. Staged
// commands run one at a time: the overlay is in the container's mount
// namespace, which every command shares.
func (e *Executor) execStaged(ctx context.Context, c sandbox.Cmd) (sandbox.Result, error) {
	e.stageMu.Lock()
	defer e.stageMu.Unlock()
	ns, masks := e.nsNow()
	if ns == nil || ns.mnt == nil || e.stageErrNow() != nil {
		if e.opts.Stage && e.stageErrNow() == nil {
			// Staging was asked for and not refused, yet the container's
			// mount namespace is not open: no overlay can be mounted. The
			// caller expects this command staged (sandbox.ErrNotStaged).
			why := errors.New("the container's mount namespace is not open to rein")
			e.stageFailed(why)
			return sandbox.Result{}, fmt.Errorf("%w: %w; commands run unstaged from now on", sandbox.ErrNotStaged, why)
		}
		if c.MustStage {
			return sandbox.Result{}, fmt.Errorf("%w: %w", sandbox.ErrNotStaged, e.notStaging())
		}
		return e.execOnce(ctx, c)
	}
	d, err := sandbox.NewStageDir(e.stageRoot)
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("%w: %w", sandbox.ErrStart, err)
	}
	sm, err := sandbox.NewStageMount(e.src, d, masks, e.masks.file, e.masks.empty)
	if err == nil {
		err = ns.mnt.Do(func() error { return sm.Attach(e.workDir) })
		_ = sm.Close()
	}
	if err != nil {
		// No overlay after all: this executor runs its commands unstaged
		// from now on, and StageErr says why. This one does not run: its
		// caller expected it staged (sandbox.ErrNotStaged).
		d.Remove()
		why := fmt.Errorf("mounting the overlay in the container: %w", err)
		e.stageFailed(why)
		return sandbox.Result{}, fmt.Errorf("%w: %w; commands run unstaged from now on", sandbox.ErrNotStaged, why)
	}
	res, err := e.execOnce(ctx, c)
	ns.sweep()
	uerr := ns.mnt.Do(func() error {
		if !sandbox.IsOverlay(e.workDir) {
			return errors.New("the work dir in the container is no longer the overlay")
		}
		return sandbox.Unmount(e.workDir)
	})
	if uerr != nil {
		// The overlay may still be over the work dir: no later command may
		// run in this container.
		e.kill(fmt.Errorf("%w: the overlay in the %s container could not be unmounted: %w", sandbox.ErrExecutorDead, e.name, uerr))
	}
	if errors.Is(err, errNotRun) {
		d.Remove()
		return res, err
	}
	staged, serr := d.Read(e.src)
	if serr != nil {
		d.Remove()
		return res, errors.Join(err, fmt.Errorf("%w: reading the command's staged writes: %w", sandbox.ErrStart, serr))
	}
	res.Staged = staged
	return res, err
}

// StageStatus says whether the docker backend can stage commands' writes
// here (Options.Stage): nil, or why not. It checks the kernel for real
// (OverlayFDStatus) but starts no container.
func StageStatus() error { return stageSupported() }

// EgressStatus says whether the docker backend can give commands the
// egress proxy here (Options.Egress): nil, or why not.
func EgressStatus() error { return egressSupported() }
