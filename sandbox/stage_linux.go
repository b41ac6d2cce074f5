//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// stagerConn is rein's end of a stager's socket.
type stagerConn struct {
	mu sync.Mutex
	f  *os.File
	r  *bufio.Reader
}

// newStagerConn makes the socket; the second file is the stager's end.
func newStagerConn() (*stagerConn, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("stager socket: %w", err)
	}
	// rein's end waits in the runtime's poller (see waitExited); the
	// stager makes its own end so too.
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("stager socket: %w", err)
	}
	f := os.NewFile(uintptr(fds[0]), "stager")
	return &stagerConn{f: f, r: bufio.NewReader(f)}, os.NewFile(uintptr(fds[1]), "stager"), nil
}

// ask sends one request and reads its answer. It waits for the answer
// whatever ctx says: an answer left unread would be taken for the next
// request's. A stager that does not answer is one whose zygote is gone
// (the socket closes) or stuck in the kernel's mount.
func (c *stagerConn) ask(req string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.f.WriteString(req + "\n"); err != nil {
		return fmt.Errorf("stager: %w", err)
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("stager: %w", err)
	}
	line = strings.TrimSuffix(line, "\n")
	if line != "ok" {
		return fmt.Errorf("stager: %s", strings.TrimPrefix(line, "error: "))
	}
	return nil
}

func (c *stagerConn) close() { c.f.Close() }

// initStage makes the stage root, where each staged command's upper dir
// goes: private to rein, outside every grant of the commands. Any work
// dir name works: the overlay takes its layers by descriptor.
func (st *landlockState) initStage() error {
	if filepath.Dir(st.workDir) == "/" {
		return fmt.Errorf("the work dir %s is right under /, which the zygote would have to be granted", st.workDir)
	}
	if !overlayFS() {
		return errors.New("this kernel has no overlayfs")
	}
	dir, lock, err := makeHeld("stage")
	if err != nil {
		return fmt.Errorf("stage root: %w", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil || within(real, st.workDir) || within(st.workDir, real) {
		os.RemoveAll(dir)
		lock.Close()
		return fmt.Errorf("stage root %s cannot hold upper dirs for %s", dir, st.workDir)
	}
	st.locks = append(st.locks, lock)
	st.stageRoot = real
	st.attr.Cloneflags |= syscall.CLONE_NEWNS // the overlay is the sandbox's alone
	return nil
}

// overlayFS reports whether the kernel lists overlayfs.
func overlayFS() bool {
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if strings.TrimSpace(strings.TrimPrefix(line, "nodev")) == "overlay" {
			return true
		}
	}
	return false
}

// execStaged runs req with the work dir under an overlay and returns the
// result with the command's writes staged (Result.Staged). Staged
// commands run one at a time: the overlay is in the zygote's mount
// namespace, which every command shares.
func (l *Landlock) execStaged(ctx context.Context, c Cmd, st *landlockState, req runRequest) (Result, error) {
	st.stageMu.Lock()
	defer st.stageMu.Unlock()
	for retried := false; ; retried = true {
		z, err := st.zygoteFor(ctx, l)
		if err != nil {
			return Result{}, err
		}
		sd, err := st.newStage()
		if err != nil {
			return Result{}, fmt.Errorf("%w: %w", ErrStart, err)
		}
		dir, upper := sd.Dir, sd.Upper
		if err := z.stage.ask("m " + filepath.Base(dir)); err != nil {
			removeStageDir(dir)
			if !z.alive() && !retried {
				continue
			}
			if ctx.Err() != nil {
				return Result{}, aborted(ctx)
			}
			// No overlay here after all (a kernel or user namespace that
			// refuses it): this executor runs its commands unstaged from
			// now on, as without Stage, and StageErr says why. This one
			// does not run: its caller expected it staged (ErrNotStaged).
			why := fmt.Errorf("mounting the overlay: %w", err)
			st.stageFailed(why)
			return Result{}, fmt.Errorf("%w: %w; commands run unstaged from now on", ErrNotStaged, why)
		}
		res, err := z.exec(ctx, c, req, l.MaxOutput, graceOr(l.Grace))
		uerr := z.stage.ask("u")
		if uerr != nil {
			// The overlay may still be over the work dir: no later command
			// may run on this zygote.
			z.fail(fmt.Errorf("the overlay could not be unmounted: %w", uerr))
			z.kill()
		}
		if errors.Is(err, errNotSent) && !retried {
			removeStageDir(dir)
			continue
		}
		staged, serr := readStaged(dir, upper, st.workDir)
		if serr != nil {
			removeStageDir(dir)
			return res, errors.Join(err, fmt.Errorf("%w: reading the command's staged writes: %w", ErrStart, serr))
		}
		staged.remove = st.removeLater
		if uerr == nil {
			// Unmounted: no overlay uses the upper dir any more, so an
			// empty one may serve the next command.
			staged.remove = st.recycleLater
		}
		res.Staged = staged
		return res, err
	}
}

// removeStageDir removes a command's stage dir; overlayfs leaves its work
// dir without permissions, and a command may leave directories so too.
// The stage of a command that wrote nothing, only overlayfs's empty dirs,
// goes by name, dir by dir; else the first try removes it as it is
// (root's rights ignore the modes, and overlayfs's own dir is opened
// first); only what that leaves is walked to give back the permissions,
// then removed.
func removeStageDir(dir string) {
	if removeEmptyStage(dir) {
		return
	}
	_ = os.Chmod(filepath.Join(dir, "work", "work"), 0o700)
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// removeEmptyStage removes dir when it holds only what a command that
// wrote nothing leaves (overlayfs's work dir, with the marks of a
// volatile mount, and an empty upper dir), and reports whether it did: a
// handful of unlinks, deepest first, instead of RemoveAll's listings.
func removeEmptyStage(dir string) bool {
	if !clearWork(dir) {
		return false
	}
	for _, d := range [...]string{"work", "upper", "."} {
		err := unix.Rmdir(filepath.Join(dir, d))
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return false
		}
	}
	return true
}

// clearWork removes overlayfs's work dir from the stage dir of a command
// that wrote nothing, with the marks of a volatile mount, and reports
// whether it could. overlayfs makes those dirs without permissions, which
// only root's rights pass: for a user they are given back first.
func clearWork(dir string) bool {
	marks := [...]string{"work/work", "work/work/incompat", "work/work/incompat/volatile"}
	dirty := filepath.Join(dir, "work/work/incompat/volatile/dirty")
	err := unix.Unlink(dirty)
	if errors.Is(err, unix.EACCES) {
		for _, d := range marks {
			if err := unix.Chmod(filepath.Join(dir, d), 0o700); err != nil && !errors.Is(err, unix.ENOENT) {
				return false
			}
		}
		err = unix.Unlink(dirty)
	}
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return false
	}
	for i := len(marks) - 1; i >= 0; i-- {
		if err := unix.Rmdir(filepath.Join(dir, marks[i])); err != nil && !errors.Is(err, unix.ENOENT) {
			return false
		}
	}
	return true
}

// stageFailed turns staging off for the executor's life.
func (st *landlockState) stageFailed(why error) {
	st.stageOff.Store(true)
	st.zmu.Lock()
	st.stageErr = why
	st.zmu.Unlock()
}

func (st *landlockState) releaseStage() {
	st.removingMu.Lock()
	st.removingDone = true
	st.removingMu.Unlock()
	st.removing.Wait()
	if st.stageRoot != "" {
		removeStageDir(st.stageRoot)
	}
}

// removeLater removes a command's stage dir in the background, so that
// the command's result does not wait for it (a walk and a removal of the
// overlay's dirs, about 0.3 ms); Close waits for it. After Close began it
// removes dir at once.
func (st *landlockState) removeLater(dir string) {
	st.removingMu.Lock()
	if st.removingDone {
		st.removingMu.Unlock()
		removeStageDir(dir)
		return
	}
	st.removing.Add(1)
	st.removingMu.Unlock()
	go func() {
		defer st.removing.Done()
		removeStageDir(dir)
	}()
}

// maxFreeStages bounds the cleared stage dirs kept for later commands:
// staged commands run one at a time, so one is in use while the last is
// being cleared.
const maxFreeStages = 2

// newStage gives a staged command its stage dir: one a command that wrote
// nothing left (recycle), else a new one.
func (st *landlockState) newStage() (StageDir, error) {
	st.removingMu.Lock()
	if n := len(st.free); n > 0 {
		d := st.free[n-1]
		st.free = st.free[:n-1]
		st.removingMu.Unlock()
		return d, nil
	}
	st.removingMu.Unlock()
	return NewStageDir(st.stageRoot)
}

// recycleLater is removeLater for a stage dir whose overlay is unmounted:
// when the command wrote nothing, the dir is cleared for the next command
// instead of removed. Making and removing the three dirs rein makes
// costs most where the file system is slow to find room for new inodes
// (ext4 without a journal passes over every inode freed in the last 30
// seconds or so, each time it makes one).
func (st *landlockState) recycleLater(dir string) {
	st.removingMu.Lock()
	if st.removingDone || len(st.free) >= maxFreeStages {
		st.removingMu.Unlock()
		st.removeLater(dir)
		return
	}
	st.removing.Add(1)
	st.removingMu.Unlock()
	go func() {
		defer st.removing.Done()
		if sd, ok := clearStage(dir); ok {
			st.removingMu.Lock()
			if !st.removingDone && len(st.free) < maxFreeStages {
				st.free = append(st.free, sd)
				st.removingMu.Unlock()
				return
			}
			st.removingMu.Unlock()
		}
		removeStageDir(dir)
	}()
}

// clearStage makes the stage dir of a command that wrote nothing as
// NewStageDir makes one, and reports whether it could: overlayfs's work
// dir goes (a volatile mount's marks would refuse the next mount), and
// the upper dir must be as made, empty, with its mode, owner and no
// attribute but overlayfs's uuid (overlayfs keeps its marks there, and a
// command may change the work dir's own mode, times or attributes, which
// show through the upper dir); its times are made new.
func clearStage(dir string) (StageDir, bool) {
	sd := StageDir{Dir: dir, Upper: filepath.Join(dir, "upper"), work: filepath.Join(dir, "work")}
	if !clearWork(dir) {
		return sd, false
	}
	fd, err := unix.Open(sd.Upper, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return sd, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode != unix.S_IFDIR|0o700 || int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid() {
		return sd, false
	}
	if !onlyOverlayUUID(fd) {
		return sd, false
	}
	if !emptyDir(fd) {
		return sd, false
	}
	now := []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}
	if unix.UtimesNanoAt(unix.AT_FDCWD, sd.Upper, now, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return sd, false
	}
	return sd, true
}

// onlyOverlayUUID reports whether the open upper dir fd has no extended
// attribute but the one overlayfs itself sets on an upper dir's root when
// it mounts it (overlay.uuid, Linux 6.6+; a command cannot set overlayfs's
// own attributes through the overlay), which the next mount reads again.
func onlyOverlayUUID(fd int) bool {
	buf := make([]byte, 256)
	n, err := unix.Flistxattr(fd, buf)
	if err != nil {
		return false
	}
	for name := range strings.SplitSeq(strings.TrimSuffix(string(buf[:n]), "\x00"), "\x00") {
		if name != "" && name != "trusted.overlay.uuid" && name != "user.overlay.uuid" {
			return false
		}
	}
	return true
}

// emptyDir reports whether the open directory fd holds nothing but . and
// .. (it reads from fd's current offset: a new descriptor).
func emptyDir(fd int) bool {
	buf := make([]byte, 512)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return false
		}
		if n <= 0 {
			return true
		}
		if _, _, names := unix.ParseDirent(buf[:n], -1, nil); len(names) > 0 {
			return false // ParseDirent leaves out . and ..
		}
	}
}

// overlayRule lets commands use the overlay now over the work dir.
// Landlock rules name inodes, and a path walk skips the mount point a
// mount hides, so neither the work dir's grant nor any other covers a
// new overlay's root: before each staged command the zygote adds a rule
// for it to the commands' ruleset, from which the command's domain is
// made at its start. Rules for overlays gone since match nothing again.
// The zygote's own domain grants the work dir's parent instead (see
// build), which the walk reaches from inside the overlay.
type overlayRule struct {
	work   string
	access uint64 // the rights the ruleset takes; 0 until found
}

// add adds the rule to ruleset, when an overlay is over the work dir.
func (o *overlayRule) add(ruleset int) error {
	fd, err := unix.Open(o.work, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("staging: opening the work dir: %w", err)
	}
	defer unix.Close(fd)
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return fmt.Errorf("staging: %w", err)
	}
	if fs.Type != unix.OVERLAYFS_SUPER_MAGIC {
		return nil // not staged
	}
	if o.access != 0 {
		return ll.LandlockAddPathBeneathRule(ruleset, &ll.PathBeneathAttr{AllowedAccess: o.access, ParentFd: fd}, 0)
	}
	// The ruleset takes the rights this kernel's ABI knows, of those a
	// read-write grant has: try from all of them down.
	acc := uint64(grantAccess[grantRW])
	for _, drop := range []uint64{0, ll.AccessFSIoctlDev, ll.AccessFSTruncate, ll.AccessFSRefer} {
		acc &^= drop
		err = ll.LandlockAddPathBeneathRule(ruleset, &ll.PathBeneathAttr{AllowedAccess: acc, ParentFd: fd}, 0)
		if err == nil {
			o.access = acc
			return nil
		}
		if !errors.Is(err, unix.EINVAL) {
			break
		}
	}
	return fmt.Errorf("staging: a Landlock rule for the overlay: %w", err)
}

// StageStatus says whether the landlock executor can stage commands'
// writes here (Landlock.Stage): Landlock works and the kernel has
// overlayfs. StageProbe checks it for real.
func StageStatus() error {
	if _, err := LandlockStatus(); err != nil {
		return err
	}
	if !overlayFS() {
		return fmt.Errorf("%w: this kernel has no overlayfs", ErrUnsupported)
	}
	return nil
}

// StageProbe runs one staged command in a temporary work dir with the
// helper (empty: this program) and checks that its write was staged and
// not applied.
func StageProbe(ctx context.Context, helper string) error {
	if err := StageStatus(); err != nil {
		return err
	}
	parent, lock, err := makeHeld("stage-probe") // a killed rein's is swept
	if err != nil {
		return err
	}
	defer lock.Close()
	defer os.RemoveAll(parent)
	work := filepath.Join(parent, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		return err
	}
	l := &Landlock{Helper: helper, WorkDir: work, Stage: true}
	defer l.Close()
	res, err := l.Exec(ctx, Cmd{Script: "echo staged > probe", Dir: work, Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	if err := l.StageErr(); err != nil {
		return err
	}
	if res.Staged == nil || res.ExitCode != 0 {
		return fmt.Errorf("the probe's write was not staged (exit %d: %s)", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	defer res.Staged.Discard()
	if _, err := os.Lstat(filepath.Join(work, "probe")); err == nil {
		return errors.New("the probe's write went straight to the work dir")
	}
	if len(res.Staged.Changes) != 1 || res.Staged.Changes[0].Path != "probe" || res.Staged.Changes[0].Kind != Created {
		return fmt.Errorf("the probe's staged writes are %v, not one created file", res.Staged.Changes)
	}
	return nil
}
