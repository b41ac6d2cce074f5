//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// stagerArg, right after HelperArg, makes the helper serve as a landlock
// executor's stager.
const stagerArg = "-stager"

// The stager is how a landlock executor stages a command's writes (see
// Staged) without starting a process per command. Landlock forbids every
// change to the mount table to a process in a domain, and the zygote and
// its commands all are, so no descendant of the zygote can mount the
// overlay. The helper, before it confines itself, starts the rein binary
// once more as the stager: same user and mount namespace as the zygote,
// outside Landlock and seccomp, with CAP_SYS_ADMIN over that mount
// namespace only (in the helper's user namespace when rein is not root).
// It serves rein alone, on a socket no command holds, two requests:
//
//	m NAME         mount an overlay over the work dir: lower the work
//	               dir, upper and work dirs NAME/upper and NAME/work in
//	               the stage root (NAME is one plain name rein made);
//	               then the credential masks that lie inside the work
//	               dir again
//	u              unmount it (lazily, with what is mounted on it)
//
// Each answered by "ok" or "error: why", one line. Because the overlay
// is mounted in the zygote's mount namespace, every command of the
// executor sees it: rein runs staged commands one at a time. At EOF (rein
// closed the executor, or died) it unmounts and exits.
func stagerMain(args []string) int {
	fs := flag.NewFlagSet(stagerArg, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fd := fs.Int("fd", -1, "the socket to rein")
	work := fs.String("work", "", "the work dir")
	root := fs.String("root", "", "the stage root")
	maskSrc := fs.String("mask-src", "", "empty file for masks")
	var maskFiles, maskDirs []string
	fs.Func("mask-file", "mask a file", func(p string) error { maskFiles = append(maskFiles, p); return nil })
	fs.Func("mask-dir", "mask a dir", func(p string) error { maskDirs = append(maskDirs, p); return nil })
	if err := fs.Parse(args); err != nil {
		return helperFail(nil, 126, fmt.Errorf("stager arguments: %w", err))
	}
	for _, p := range []string{*work, *root} {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return helperFail(nil, 126, fmt.Errorf("stager arguments: %q is not an absolute, clean path", p))
		}
	}
	if *fd < 3 {
		return helperFail(nil, 126, errors.New("stager arguments: need -fd"))
	}
	// Between commands the stager waits in the runtime's poller, not in a
	// blocking read (see waitExited).
	if err := unix.SetNonblock(*fd, true); err != nil {
		return helperFail(nil, 126, fmt.Errorf("stager: %w", err))
	}
	conn := os.NewFile(uintptr(*fd), "stager")
	defer conn.Close()
	// Whatever is mounted here stays in this namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return helperFail(nil, 126, fmt.Errorf("stager: a private mount namespace: %w", err))
	}
	s := stager{work: *work, root: *root, maskSrc: *maskSrc, maskFiles: maskFiles, maskDirs: maskDirs, userxattr: !initialUserNS()}
	in := bufio.NewReader(conn)
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			s.unmount()
			return 0
		}
		answer := "ok\n"
		if err := s.do(strings.TrimSuffix(line, "\n")); err != nil {
			answer = "error: " + strings.ReplaceAll(err.Error(), "\n", " ") + "\n"
		}
		if _, err := io.WriteString(conn, answer); err != nil {
			s.unmount()
			return 0
		}
	}
}

// stager is the stager's state.
type stager struct {
	work, root          string
	maskSrc             string
	maskFiles, maskDirs []string
	mounted             bool
	userxattr           bool // in a user namespace: overlayfs keeps its marks in user.*
}

func (s *stager) do(req string) error {
	f := strings.Split(req, " ")
	switch {
	case len(f) == 2 && f[0] == "m":
		name := f[1]
		if !stageName(name) {
			return fmt.Errorf("%q is not a stage dir's name", name)
		}
		if s.mounted {
			return errors.New("an overlay is mounted already")
		}
		// Layers by descriptor (overlayMount): no path is spelled in a
		// mount option, so the work dir's name may hold anything.
		lower, err := openDir(s.work)
		if err != nil {
			return err
		}
		defer unix.Close(lower)
		stage, err := openDir(filepath.Join(s.root, name))
		if err != nil {
			return err
		}
		defer unix.Close(stage)
		upper, err := unix.Openat(stage, "upper", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("the upper dir: %w", err)
		}
		defer unix.Close(upper)
		wdir, err := unix.Openat(stage, "work", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("the overlay's work dir: %w", err)
		}
		defer unix.Close(wdir)
		m, err := overlayMount(lower, upper, wdir, s.userxattr)
		if err != nil {
			return fmt.Errorf("mounting the overlay: %w", err)
		}
		err = unix.MoveMount(m, "", lower, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
		unix.Close(m)
		if err != nil {
			return fmt.Errorf("mounting the overlay over the work dir: %w", err)
		}
		s.mounted = true
		if err := s.mask(); err != nil {
			s.unmount()
			return err
		}
		return nil
	case len(f) == 1 && f[0] == "u":
		if !s.mounted {
			return errors.New("no overlay is mounted")
		}
		return s.unmount()
	}
	return fmt.Errorf("unknown request %q", req)
}

// mask hides again, over the overlay, the credential files and directories
// inside the work dir that the helper masked under it.
func (s *stager) mask() error {
	for _, p := range s.maskFiles {
		if !within(p, s.work) {
			continue
		}
		if err := unix.Mount(s.maskSrc, p, "", unix.MS_BIND, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("masking %s: %w", p, err)
		}
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("masking %s read-only: %w", p, err)
		}
	}
	for _, p := range s.maskDirs {
		if !within(p, s.work) {
			continue
		}
		err := unix.Mount("rein-mask", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("masking %s: %w", p, err)
		}
	}
	return nil
}

func (s *stager) unmount() error {
	if !s.mounted {
		return nil
	}
	if err := unix.Unmount(s.work, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("unmounting the overlay: %w", err)
	}
	s.mounted = false
	return nil
}

// initialUserNS reports whether this process is in the initial user
// namespace (its uid map is the whole identity range).
func initialUserNS() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	return err == nil && strings.Join(strings.Fields(string(b)), " ") == "0 0 4294967295"
}

// stageName reports whether name is what os.MkdirTemp(root, "cmd-")
// makes: one plain name, safe in the stager's request syntax.
func stageName(name string) bool {
	rest, ok := strings.CutPrefix(name, "cmd-")
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// startStager starts the stager from the helper (see stagerMain), before
// the helper confines itself, on the socket fd; the helper then closes fd.
func startStager(fd int, work, root string, cfg helperConfig) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("starting the stager: %w", err)
	}
	args := []string{self, HelperArg, stagerArg, "-fd", "3", "-work", work, "-root", root}
	if cfg.maskSrc != "" {
		args = append(args, "-mask-src", cfg.maskSrc)
	}
	for _, p := range cfg.maskFiles {
		args = append(args, "-mask-file", p)
	}
	for _, p := range cfg.maskDirs {
		args = append(args, "-mask-dir", p)
	}
	sock := os.NewFile(uintptr(fd), "stager")
	defer sock.Close()
	if os.Geteuid() != 0 {
		// Ambient capabilities must be inheritable first; and the
		// helper's own ambient CAP_SETPCAP must not reach the stager.
		if err := inheritStagerCaps(); err != nil {
			return fmt.Errorf("starting the stager: %w", err)
		}
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_LOWER, unix.CAP_SETPCAP, 0, 0); err != nil {
			return fmt.Errorf("starting the stager: %w", err)
		}
	}
	cmd := &exec.Cmd{
		Path:       self,
		Args:       args,
		Env:        []string{},
		ExtraFiles: []*os.File{sock},
		SysProcAttr: &syscall.SysProcAttr{
			// Outside rein's user namespace the stager keeps the
			// capabilities it needs across the exec; as root it has them.
			AmbientCaps: ambientStager(),
		},
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the stager: %w", err)
	}
	go func() { _ = cmd.Wait() }() // the helper execs before this matters
	return nil
}

// stagerCaps are what the stager needs in a user namespace (rein not
// root): CAP_SYS_ADMIN to mount, and CAP_DAC_OVERRIDE because overlayfs
// makes its work dir's "work" with mode 0 and then works in it with the
// mounter's credentials (without it the mount fails with EACCES).
func stagerCaps() []uintptr { return []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_DAC_OVERRIDE} }

func ambientStager() []uintptr {
	if os.Geteuid() == 0 {
		return nil
	}
	return stagerCaps()
}

// inheritStagerCaps adds stagerCaps to the calling thread's inheritable
// set (they are in the permitted one in the helper's user namespace).
func inheritStagerCaps() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	for _, c := range stagerCaps() {
		data[c/32].Inheritable |= 1 << (c % 32)
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
