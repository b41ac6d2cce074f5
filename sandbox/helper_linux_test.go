//go:build linux

package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
)

// TestHelperInPIDNamespace keeps the finding behind HelperMain's design: a
// Go helper that enforced Landlock process-wide through go-landlock (libpsx
// in a cgo build, which this test binary is) hung at 100% CPU in a new PID
// namespace, because libpsx lists /proc/<getpid()>/task and getpid() there
// is 1 while /proc is the host's. The helper restricts only its own thread
// and execs from it, so in a PID namespace it must start the command as
// anywhere else.
func TestHelperInPIDNamespace(t *testing.T) {
	_, err := LandlockStatus()
	testenv.Need(t, "landlock", err)
	work, tmp := t.TempDir(), t.TempDir()
	netns, err := netnsID("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	cfg := helperConfig{
		grants: systemGrants(baseGrants(), work, tmp),
		net:    "none",
		netns:  netns,
		argv:   []string{"/bin/sh", "-c", `echo "pid $$"; cat /etc/shadow 2>/dev/null || echo confined`},
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{HelperArg}, helperArgs(cfg)...)...)
	cmd.Dir = work
	attr := namespaceAttr(false) // a user namespace too, even as root: CLONE_NEWNET with it
	attr.Cloneflags |= syscall.CLONE_NEWPID
	cmd.SysProcAttr = &attr
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the helper hung in a PID namespace:\n%s", out)
	}
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if got := string(out); got != "pid 1\nconfined\n" {
		t.Errorf("output %q, want the shell as pid 1 of its namespace, confined", got)
	}
}

// The helper refuses to run anything when it finds itself in the network
// namespace rein gave as its own (started without CLONE_NEWNET).
func TestHelperRefusesHostNetwork(t *testing.T) {
	_, err := LandlockStatus()
	testenv.Need(t, "landlock", err)
	work := t.TempDir()
	netns, err := netnsID("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	cfg := helperConfig{grants: systemGrants(baseGrants(), work, t.TempDir()), net: "none", netns: netns, argv: []string{"/bin/sh", "-c", "echo ran"}}
	cmd := exec.CommandContext(t.Context(), os.Args[0], append([]string{HelperArg}, helperArgs(cfg)...)...)
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 126 || strings.Contains(string(out), "ran") || !strings.Contains(string(out), "network namespace") {
		t.Errorf("helper in the host's network namespace: %v\n%s\nwant exit 126 and nothing run", err, out)
	}
}

func TestCgroupDir(t *testing.T) {
	t.Parallel()
	mountinfo := []byte(`25 30 0:22 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755
31 25 0:27 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw
36 25 0:32 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids
37 25 0:33 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
38 25 0:34 /docker/abc /sys/fs/cgroup/my\040pids rw - cgroup cgroup rw,pids
`)
	for _, c := range []struct {
		fstype, opt, path, want string
	}{
		{"cgroup2", "", "/user.slice/session-1.scope", "/sys/fs/cgroup/unified/user.slice/session-1.scope"},
		{"cgroup", "pids", "/", "/sys/fs/cgroup/pids"},
		{"cgroup", "pids", "/a/b", "/sys/fs/cgroup/pids/a/b"},
		{"cgroup", "memory", "/docker/abc/x", "/sys/fs/cgroup/memory/x"},
		{"cgroup", "memory", "/docker/abcdef", ""},
		{"cgroup", "cpu", "/", ""},
	} {
		if got := cgroupDir(mountinfo, c.fstype, c.opt, c.path); got != c.want {
			t.Errorf("cgroupDir(%s, %s, %s) = %q, want %q", c.fstype, c.opt, c.path, got, c.want)
		}
	}
	if got := unescapeMount(`/sys/fs/cgroup/my\040pids`); got != "/sys/fs/cgroup/my pids" {
		t.Errorf("unescapeMount = %q", got)
	}
}

// The grants rein makes for this machine's /etc never include a file that
// others may not read.
func TestSystemGrantsOnThisEtc(t *testing.T) {
	t.Parallel()
	for _, g := range systemGrants(baseGrants(), "/work-dir-x", "/tmp-dir-x") {
		if g.kind != grantR || !strings.HasPrefix(g.path, "/etc/") {
			continue
		}
		err := filepath.WalkDir(g.path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if info.Mode()&fs.ModeSymlink == 0 && info.Mode().Perm()&0o004 == 0 {
				t.Errorf("grant %s covers %s (mode %v), which others may not read", g.path, p, info.Mode())
			}
			return nil
		})
		if err != nil {
			t.Errorf("walking %s: %v", g.path, err)
		}
	}
}
