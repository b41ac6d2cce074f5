//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// An overlay is mounted with the new mount API, its three layers given as
// open directories (fsconfig FSCONFIG_SET_FD), never as paths spelled in
// a mount option string: overlayfs splits its legacy options at commas
// and colons and unescapes backslashes, so a work dir named "a,b" or
// "x:y" could not be staged, and a hostile one could add options. By
// descriptor, any name the kernel can open works (spaces, newlines,
// bytes that are not UTF-8). Kernels whose overlayfs does not take layers
// by descriptor (before Linux 6.13) cannot stage; ErrOverlayFD says so.

// ErrOverlayFD marks a kernel whose overlayfs cannot take its layers as
// descriptors.
var ErrOverlayFD = errors.New("this kernel's overlayfs does not take layers by descriptor (Linux 6.13 or newer is needed to stage)")

// overlayOptions are fixed: no redirects, index or metacopy, which would
// put state into the upper dir that readStaged does not read.
var overlayOptions = [][2]string{{"redirect_dir", "off"}, {"index", "off"}, {"metacopy", "off"}}

// overlayMount makes a detached overlay mount (fsmount) of lower, upper
// and work, open directories (O_PATH is enough), nosuid and nodev. With
// userxattr overlayfs keeps its marks in user.* attributes, as it must in
// a user namespace. The caller attaches it (move_mount) and closes it.
func overlayMount(lower, upper, work int, userxattr bool) (int, error) {
	fs, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("fsopen overlay: %w", err)
	}
	defer unix.Close(fs)
	for _, l := range []struct {
		key string
		fd  int
	}{{"lowerdir+", lower}, {"upperdir", upper}, {"workdir", work}} {
		if err := unix.FsconfigSetFd(fs, l.key, l.fd); err != nil {
			if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
				return -1, fmt.Errorf("%w: %s: %w", ErrOverlayFD, l.key, err)
			}
			return -1, fmt.Errorf("overlay %s: %w", l.key, err)
		}
	}
	for _, o := range overlayOptions {
		if userxattr && o[0] == "redirect_dir" {
			continue // userxattr takes nofollow: no redirect is made or followed
		}
		if err := unix.FsconfigSetString(fs, o[0], o[1]); err != nil {
			return -1, fmt.Errorf("overlay %s=%s: %w", o[0], o[1], err)
		}
	}
	if userxattr {
		if err := unix.FsconfigSetFlag(fs, "userxattr"); err != nil {
			return -1, fmt.Errorf("overlay userxattr: %w", err)
		}
	}
	// volatile: no sync of the upper dir's file system when the overlay
	// is unmounted (Linux 5.10+; older kernels refuse the flag, and the
	// overlay syncs). Without it every command's unmount writes back all
	// the dirty pages of the file system the stage dirs are on, rein's or
	// not. The upper dir is read once, from the page cache, then thrown
	// away; what is applied to the work dir is made durable there.
	_ = unix.FsconfigSetFlag(fs, "volatile")
	if err := unix.FsconfigCreate(fs); err != nil {
		return -1, fmt.Errorf("creating the overlay: %w", err)
	}
	m, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return -1, fmt.Errorf("fsmount overlay: %w", err)
	}
	return m, nil
}

// openDir opens dir as a path descriptor, never following a link at its
// last component.
func openDir(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening %q: %w", dir, err)
	}
	return fd, nil
}

// StageMount is a command's overlay, made on rein's side and not yet
// attached anywhere: the work dir as its lower layer, a fresh upper dir,
// and the credential masks already mounted inside it. A backend whose
// commands run in another mount namespace (the docker backend's
// container) attaches it there with Attach from a thread that entered
// that namespace. Close releases what was not attached.
type StageMount struct {
	fd int // the detached overlay, masks inside; -1 once attached or closed
}

// NewStageMount builds the overlay of a command's stage dir (as
// NewStageDir made it) over lower, the work dir on this side, with masks
// (absolute paths on this side, under lower) mounted read-only over it:
// Files with the empty file maskFile, Dirs with the empty directory
// maskDir. Masks outside lower, or whose path in the overlay is a link or
// missing, are skipped: nothing is mounted through a link.
func NewStageMount(lower string, dir StageDir, m Masks, maskFile, maskDir string) (*StageMount, error) {
	lfd, err := openDir(lower)
	if err != nil {
		return nil, err
	}
	defer unix.Close(lfd)
	ufd, err := openDir(dir.Upper)
	if err != nil {
		return nil, err
	}
	defer unix.Close(ufd)
	wfd, err := openDir(dir.work)
	if err != nil {
		return nil, err
	}
	defer unix.Close(wfd)
	fd, err := overlayMount(lfd, ufd, wfd, os.Geteuid() != 0)
	if err != nil {
		return nil, err
	}
	sm := &StageMount{fd: fd}
	for _, l := range []struct {
		paths []string
		src   string
	}{{m.Files, maskFile}, {m.Dirs, maskDir}} {
		for _, p := range l.paths {
			rel, err := filepath.Rel(lower, p)
			if err != nil || rel == "." || !filepath.IsLocal(rel) {
				continue
			}
			if err := maskInside(fd, rel, l.src); err != nil {
				sm.Close()
				return nil, err
			}
		}
	}
	return sm, nil
}

// maskInside mounts src read-only over rel inside the mount tree root,
// resolving rel beneath root and through no link; a rel that is not there
// is skipped.
func maskInside(root int, rel, src string) error {
	target, err := unix.Openat2(root, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return nil // gone, or a link now: nothing to hide there
	}
	if err != nil {
		return fmt.Errorf("masking %s: %w", rel, err)
	}
	defer unix.Close(target)
	var st unix.Stat_t
	if err := unix.Fstat(target, &st); err != nil {
		return fmt.Errorf("masking %s: %w", rel, err)
	}
	var sst unix.Stat_t
	if err := unix.Stat(src, &sst); err != nil {
		return fmt.Errorf("masking %s: %w", rel, err)
	}
	if (st.Mode&unix.S_IFMT == unix.S_IFDIR) != (sst.Mode&unix.S_IFMT == unix.S_IFDIR) {
		return nil // a file where a directory was, or the reverse: not the credential found
	}
	clone, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("masking %s: %w", rel, err)
	}
	defer unix.Close(clone)
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
	if err := unix.MountSetattr(clone, "", unix.AT_EMPTY_PATH, attr); err != nil {
		return fmt.Errorf("masking %s read-only: %w", rel, err)
	}
	if err := unix.MoveMount(clone, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("masking %s: %w", rel, err)
	}
	return nil
}

// Attach mounts the overlay over target, a path in the calling thread's
// mount namespace, and gives up the descriptor. It must run on a thread
// locked to that namespace.
func (sm *StageMount) Attach(target string) error {
	if sm.fd < 0 {
		return errors.New("the overlay is attached or closed already")
	}
	tfd, err := unix.Open(target, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("the work dir in the sandbox: %w", err)
	}
	defer unix.Close(tfd)
	if err := unix.MoveMount(sm.fd, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("mounting the overlay over the work dir: %w", err)
	}
	return sm.Close()
}

// Close releases an overlay not attached (the kernel then unmounts it).
func (sm *StageMount) Close() error {
	if sm.fd < 0 {
		return nil
	}
	err := unix.Close(sm.fd)
	sm.fd = -1
	return err
}

// StageDir is one command's stage dir: the overlay's upper and work dirs.
type StageDir struct {
	Dir   string // removed by the Staged's Apply or Discard, or RemoveStageDir
	Upper string
	work  string
}

// NewStageDir makes a command's stage dir inside root.
func NewStageDir(root string) (StageDir, error) {
	dir, err := os.MkdirTemp(root, "cmd-")
	if err != nil {
		return StageDir{}, fmt.Errorf("a stage dir: %w", err)
	}
	d := StageDir{Dir: dir, Upper: filepath.Join(dir, "upper"), work: filepath.Join(dir, "work")}
	for _, p := range []string{d.Upper, d.work} {
		if err := os.Mkdir(p, 0o700); err != nil {
			removeStageDir(dir)
			return StageDir{}, fmt.Errorf("a stage dir: %w", err)
		}
	}
	return d, nil
}

// Read reads what the command wrote through the overlay over lower (the
// work dir) into a Staged, which then owns the stage dir.
func (d StageDir) Read(lower string) (*Staged, error) {
	return readStaged(d.Dir, d.Upper, lower)
}

// Remove removes the stage dir.
func (d StageDir) Remove() { removeStageDir(d.Dir) }

// NSThread is a thread of rein's locked into another process's mount
// namespace (a container's), which runs what Do gives it there. It has a
// file system context of its own (unshare CLONE_FS), so entering the
// namespace changes nothing for any other thread, and it is never given
// back to the Go scheduler: when Close ends it, the thread ends too.
// The caller needs CAP_SYS_ADMIN over that namespace (root).
type NSThread struct {
	mu     sync.Mutex // held across a call, so Close waits for it
	closed bool
	calls  chan nsCall
}

type nsCall struct {
	fn   func() error
	done chan error
}

// NewNSThread starts a thread in the mount namespace ns (an open
// /proc/PID/ns/mnt).
func NewNSThread(ns *os.File) (*NSThread, error) {
	t := &NSThread{calls: make(chan nsCall)}
	ready := make(chan error, 1)
	onOwnThread(func() {
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			ready <- fmt.Errorf("a thread of its own file system context: %w", err)
			return
		}
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNS); err != nil {
			ready <- fmt.Errorf("entering the sandbox's mount namespace: %w", err)
			return
		}
		ready <- nil
		for c := range t.calls {
			c.done <- c.fn()
		}
	})
	if err := <-ready; err != nil {
		return nil, err
	}
	return t, nil
}

// ErrNSThreadClosed marks a Do after Close.
var ErrNSThreadClosed = errors.New("the sandbox's namespace thread is closed")

// onOwnThread runs fn on a new goroutine locked to an OS thread that is
// not the main thread, and never unlocked: the thread ends with fn. The
// main thread matters: Go never ends it, and the kernel shows its
// namespaces to every thread of the process under /proc/self (mountinfo,
// net), so a main thread left in a container's mount namespace would
// make rein read the container's mounts from then on.
func onOwnThread(fn func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			fn()
			return // still locked: the thread ends here
		}
		// Hold the main thread while another goroutine, which then cannot
		// be given it, locks a thread of its own; then let it go.
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(locked)
			fn()
		}()
		<-locked
		runtime.UnlockOSThread()
	}()
}

// Do runs fn on the thread and returns its error; after Close it runs
// nothing and returns ErrNSThreadClosed.
func (t *NSThread) Do(fn func() error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrNSThreadClosed
	}
	c := nsCall{fn: fn, done: make(chan error, 1)}
	t.calls <- c
	return <-c.done
}

// Close ends the thread, once a call under way has returned.
func (t *NSThread) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		close(t.calls)
	}
}

// Unmount detaches what is mounted over target, with what is mounted on
// it, in the calling thread's mount namespace.
func Unmount(target string) error {
	if err := unix.Unmount(target, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil {
		return fmt.Errorf("unmounting the overlay: %w", err)
	}
	return nil
}

// IsOverlay reports whether target, in the calling thread's mount
// namespace, is the root of an overlay.
func IsOverlay(target string) bool {
	var fs unix.Statfs_t
	return unix.Statfs(target, &fs) == nil && fs.Type == unix.OVERLAYFS_SUPER_MAGIC
}

// OverlayFDStatus checks for real that this kernel can make an overlay
// whose layers are descriptors and mount a mask inside it before it is
// attached: what staging needs. It mounts nothing anywhere.
func OverlayFDStatus() error {
	if !overlayFS() {
		return fmt.Errorf("%w: this kernel has no overlayfs", ErrUnsupported)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: making an overlay needs root here", ErrUnsupported)
	}
	parent, lock, err := makeHeld("stage-probe") // a killed rein's is swept
	if err != nil {
		return err
	}
	defer lock.Close()
	defer removeStageDir(parent)
	lower := filepath.Join(parent, "lower")
	if err := os.Mkdir(lower, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(lower, ".env"), []byte("x"), 0o600); err != nil {
		return err
	}
	d, err := NewStageDir(parent)
	if err != nil {
		return err
	}
	empty := filepath.Join(parent, "empty")
	if err := os.WriteFile(empty, nil, 0o400); err != nil {
		return err
	}
	sm, err := NewStageMount(lower, d, Masks{Files: []string{filepath.Join(lower, ".env")}}, empty, parent)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return sm.Close()
}
