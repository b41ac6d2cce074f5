//go:build linux

package sandbox_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
	"golang.org/x/sys/unix"
)

// needLandlock skips (or, in CI, fails) a test where the landlock backend
// does not work, and returns the Landlock ABI in use.
func needLandlock(t testing.TB) int {
	t.Helper()
	abi, err := sandbox.LandlockStatus()
	testenv.Need(t, "landlock", err)
	return abi
}

// newLandlock returns a landlock executor for a fresh work dir, closed at
// the end of the test.
func newLandlock(t testing.TB, l *sandbox.Landlock) (*sandbox.Landlock, string) {
	t.Helper()
	needLandlock(t)
	work := t.TempDir()
	l.WorkDir = work
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l, work
}

// copyProbe puts the test binary, which doubles as the probe, into dir.
func copyProbe(t testing.TB, dir string) string {
	t.Helper()
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "probe")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// int80ELF is a 64-bit x86 program of 143 bytes that makes one system call
// through the 32-bit ABI (int 0x80): unshare(CLONE_NEWUSER), i386 number
// 310. It exits with the low byte of the result: 0 when the call got
// through, 218 for -ENOSYS, 255 for -EPERM.
func int80ELF() []byte {
	code := []byte{
		0xb8, 0x36, 0x01, 0x00, 0x00, // mov eax, 310 (i386 unshare)
		0xbb, 0x00, 0x00, 0x00, 0x10, // mov ebx, CLONE_NEWUSER
		0xcd, 0x80, // int 0x80
		0x89, 0xc7, // mov edi, eax
		0xb8, 0x3c, 0x00, 0x00, 0x00, // mov eax, 60 (exit)
		0x0f, 0x05, // syscall
	}
	const base, hdr = 0x400000, 64 + 56
	var b bytes.Buffer
	le := func(v any) { _ = binaryWrite(&b, v) }
	// ELF header
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0})
	b.Write(make([]byte, 8))
	le(uint16(2))          // ET_EXEC
	le(uint16(62))         // EM_X86_64
	le(uint32(1))          // version
	le(uint64(base + hdr)) // entry
	le(uint64(64))         // program headers at
	le(uint64(0))          // no section headers
	le(uint32(0))          // flags
	le(uint16(64))         // header size
	le(uint16(56))         // program header size
	le(uint16(1))          // one program header
	le(uint16(0))
	le(uint16(0))
	le(uint16(0))
	// PT_LOAD, R+X, the whole file
	le(uint32(1))
	le(uint32(5))
	le(uint64(0))
	le(uint64(base))
	le(uint64(base))
	le(uint64(hdr + len(code)))
	le(uint64(hdr + len(code)))
	le(uint64(0x1000))
	b.Write(code)
	return b.Bytes()
}

func binaryWrite(w io.Writer, v any) error {
	var buf [8]byte
	switch x := v.(type) {
	case uint16:
		buf[0], buf[1] = byte(x), byte(x>>8)
		_, err := w.Write(buf[:2])
		return err
	case uint32:
		for i := range 4 {
			buf[i] = byte(x >> (8 * i))
		}
		_, err := w.Write(buf[:4])
		return err
	case uint64:
		for i := range 8 {
			buf[i] = byte(x >> (8 * i))
		}
		_, err := w.Write(buf[:8])
		return err
	}
	return fmt.Errorf("binaryWrite: %T", v)
}

// escapeEnv is the world one attack sees: paths and processes outside the
// sandbox to go after.
type escapeEnv struct {
	work, out, realHome string
	target              *exec.Cmd // a process outside to trace and signal
	tcpPort, udpPort    int
	udp                 net.PacketConn
	unixSock, abstract  string
	leakFD              int
	outsideTmp          string // a path in the host's /tmp nobody may create
}

// setupEscapes plants what the attacks go after.
func setupEscapes(t *testing.T, work string) *escapeEnv {
	t.Helper()
	e := &escapeEnv{work: work, out: t.TempDir()}
	write := func(p, s string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(e.out, "secret"), "ESCAPED\n", 0o644)
	write(filepath.Join(e.out, "victim"), "data\n", 0o644)
	if err := os.Mkdir(filepath.Join(e.out, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(e.out, "dir", "secret"), "ESCAPED\n", 0o644)
	write(filepath.Join(e.out, "dir", "true"), "#!/bin/sh\necho ESCAPED\n", 0o755)
	for link, to := range map[string]string{"link": "secret", "dirlink": "dir"} {
		if err := os.Symlink(filepath.Join(e.out, to), filepath.Join(work, link)); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		// In the work dir, so only permissions stand in the way: root's
		// CAP_DAC_OVERRIDE reads it, a root without capabilities does not.
		theirs := filepath.Join(work, "theirs")
		write(theirs, "ESCAPED\n", 0o600)
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	e.realHome, _ = os.UserHomeDir()
	e.outsideTmp = filepath.Join(os.TempDir(), fmt.Sprintf("rein-escape-%d-%d", os.Getpid(), time.Now().UnixNano()))
	t.Cleanup(func() { os.Remove(e.outsideTmp) })

	e.target = exec.Command("sleep", "600")
	if err := e.target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.target.Process.Kill(); e.target.Wait() })

	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	e.tcpPort = tcp.Addr().(*net.TCPAddr).Port
	go acceptAll(tcp)
	e.udp, err = net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.udp.Close() })
	e.udpPort = e.udp.LocalAddr().(*net.UDPAddr).Port
	e.unixSock = filepath.Join(e.out, "sock")
	us, err := net.Listen("unix", e.unixSock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { us.Close() })
	go acceptAll(us)
	e.abstract = fmt.Sprintf("@rein-escape-%d", os.Getpid())
	as, err := net.Listen("unix", e.abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { as.Close() })
	go acceptAll(as)

	// A descriptor rein holds without O_CLOEXEC, as one inherited from a
	// terminal or a parent would be: every child of this process gets it.
	e.leakFD, err = syscall.Open(filepath.Join(e.out, "secret"), syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(e.leakFD) })
	return e
}

func acceptAll(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

func (e *escapeEnv) environ(probe string) []string {
	return append(sandbox.MinimalEnv(),
		"OUT="+e.out,
		"REALHOME="+e.realHome,
		"PROBE="+probe,
		"TARGET="+strconv.Itoa(e.target.Process.Pid),
		"TCPPORT="+strconv.Itoa(e.tcpPort),
		"UDPPORT="+strconv.Itoa(e.udpPort),
		"UNIXSOCK="+e.unixSock,
		"ABSTRACT="+e.abstract,
		"LEAKFD="+strconv.Itoa(e.leakFD),
		"OUTSIDETMP="+e.outsideTmp,
	)
}

// An attack prints ESCAPED when it gets through.
type attack struct {
	name   string
	script string
	// control says when the attack must work with Local, which proves
	// that the test can fail: "always", "root" (needs root outside), or
	// "" (not run outside: it would harm the host, or has nothing to reach).
	control string
	// pre, when set, says why the attack cannot be tried here ("" if it can).
	pre func(e *escapeEnv) string
	// want, when set, must appear in the sandboxed run's stdout: the
	// errno that shows which guard refused.
	want string
	// after, when set, checks the world after the sandboxed run.
	after func(e *escapeEnv) error
}

func attacks(abi int) []attack {
	p := func(mode string, args ...string) string {
		return fmt.Sprintf(`%s="%s" "$PROBE" %s && echo ESCAPED`, "REIN_SANDBOX_PROBE", mode, strings.Join(args, " "))
	}
	notCreated := func(path func(*escapeEnv) string) func(*escapeEnv) error {
		return func(e *escapeEnv) error {
			if _, err := os.Lstat(path(e)); err == nil {
				return fmt.Errorf("%s was created outside the sandbox", path(e))
			}
			return nil
		}
	}
	needRoot := func(*escapeEnv) string {
		if os.Geteuid() != 0 {
			return "needs root to mean anything"
		}
		return ""
	}
	as := []attack{
		{name: "read a planted file outside", script: `cat "$OUT/secret"`, control: "always"},
		{name: "list a directory outside", script: `ls "$OUT" | grep -q secret && echo ESCAPED`, control: "always"},
		{name: "read /etc/shadow", script: `cat /etc/shadow >/dev/null && echo ESCAPED`, control: "root", pre: needRoot},
		{name: "read /etc/gshadow", script: `cat /etc/gshadow >/dev/null && echo ESCAPED`, control: "root", pre: needRoot},
		{name: "list the home directory", script: `ls -a "$REALHOME" >/dev/null && echo ESCAPED`, control: "always",
			pre: func(e *escapeEnv) string {
				if e.realHome == "" || unix.Access(e.realHome, unix.R_OK) != nil {
					return "no readable home"
				}
				return ""
			}},
		{name: "read credential directories", script: `for d in .ssh .aws .gnupg .config; do ls "$REALHOME/$d" >/dev/null 2>&1 && echo ESCAPED; done; true`},
		{name: "write to the host's /tmp", script: `echo x > "$OUTSIDETMP" && echo ESCAPED`, control: "always",
			after: notCreated(func(e *escapeEnv) string { return e.outsideTmp })},
		{name: "write a file outside", script: `echo x > "$OUT/written" && echo ESCAPED`, control: "always",
			after: notCreated(func(e *escapeEnv) string { return filepath.Join(e.out, "written") })},
		{name: "write to the home directory", script: `echo x > "$REALHOME/.rein-escape-$$" && echo ESCAPED`,
			pre: func(e *escapeEnv) string {
				if e.realHome == "" || unix.Access(e.realHome, unix.W_OK) != nil {
					return "no writable home"
				}
				return ""
			}},
		{name: "truncate a file outside", script: `truncate -s 0 "$OUT/victim" && echo ESCAPED`, control: "always",
			after: func(e *escapeEnv) error {
				if b, _ := os.ReadFile(filepath.Join(e.out, "victim")); len(b) == 0 {
					return fmt.Errorf("the file outside was truncated")
				}
				return nil
			}},
		{name: "follow a symlinked file", script: `cat link`, control: "always"},
		{name: "follow a symlinked directory", script: `cat dirlink/secret`, control: "always"},
		{name: "list through a symlinked directory", script: `ls dirlink | grep -q secret && echo ESCAPED`, control: "always"},
		{name: "plant a new symlink and read it", script: `ln -sf "$OUT/secret" mine && cat mine`, control: "always"},
		{name: "hard-link a file from outside", script: `ln "$OUT/secret" hard && cat hard`, control: "always"},
		{name: "move a file out", script: `echo x > f && mv f "$OUT/moved" && echo ESCAPED`, control: "always",
			after: notCreated(func(e *escapeEnv) string { return filepath.Join(e.out, "moved") })},
		{name: "execute a program outside", script: `"$OUT/dir/true"`, control: "always"},
		{name: "use a descriptor rein inherited", script: `[ -e /proc/$$/fd/$LEAKFD ] && echo ESCAPED`, control: "always"},
		{name: "connect to the host's 127.0.0.1 over TCP", script: `exec 3<>/dev/tcp/127.0.0.1/$TCPPORT && echo ESCAPED`, control: "always"},
		{name: "send UDP to the host's 127.0.0.1", script: `echo ping > /dev/udp/127.0.0.1/$UDPPORT && echo ESCAPED`, control: "always"},
		{name: "resolve a name", script: `getent hosts example.com && echo ESCAPED`},
		{name: "connect to a unix socket outside", script: p("connect-unix", `"$UNIXSOCK"`), control: "always"},
		{name: "connect to an abstract unix socket", script: p("connect-unix", `"$ABSTRACT"`), control: "always"},
		{name: "connect to the Docker socket", script: p("connect-unix", "/run/docker.sock"),
			pre: func(*escapeEnv) string {
				if _, err := os.Stat("/run/docker.sock"); err != nil {
					return "no Docker socket"
				}
				return ""
			}},
		{name: "signal the parent", script: `kill -0 $PPID && echo ESCAPED`, control: "always"},
		{name: "signal a process outside", script: `kill -0 $TARGET && echo ESCAPED`, control: "always"},
		{name: "kill a process outside", script: `kill -KILL $TARGET && echo ESCAPED`,
			after: func(e *escapeEnv) error {
				if syscall.Kill(e.target.Process.Pid, 0) != nil {
					return fmt.Errorf("the target process outside is dead")
				}
				return nil
			}},
		{name: "kill init", script: `kill -0 1 && echo ESCAPED`, control: "root", pre: needRoot},
		{name: "read init's environment", script: `cat /proc/1/environ | tr '\0' '\n' | grep -q . && echo ESCAPED`},
		{name: "read the parent's environment", script: `cat /proc/$PPID/environ | tr '\0' '\n' | grep -q . && echo ESCAPED`, control: "always"},
		{name: "read a process's environment", script: `cat /proc/$TARGET/environ | tr '\0' '\n' | grep -q . && echo ESCAPED`, control: "always"},
		{name: "follow the parent's descriptors", script: `readlink /proc/$PPID/fd/0 && echo ESCAPED`, control: "always"},
		{name: "read a file the parent holds open", script: `cat /proc/$PPID/fd/$LEAKFD`, control: "always"},
		{name: "enter the parent's root", script: `cat /proc/$PPID/root/$OUT/secret`, control: "always"},
		{name: "write to /proc", script: `echo x > /proc/self/comm && echo ESCAPED`, control: "always"},
		{name: "ptrace a process", script: p("ptrace", "$TARGET"), control: "always", want: "(EPERM)"},
		{name: "ptrace the parent", script: p("ptrace", "$PPID"), want: "(EPERM)"},
		// strace runs until killed once attached, and exits at once when it cannot attach.
		{name: "strace a process", script: `timeout 2 strace -p $TARGET -e trace=none -o /dev/null; [ $? = 124 ] && echo ESCAPED`,
			pre: func(*escapeEnv) string {
				if _, err := exec.LookPath("strace"); err != nil {
					return "no strace"
				}
				return ""
			}},
		{name: "read another process's memory", script: p("vmread", "$TARGET"), control: "always", want: "(EPERM)"},
		{name: "create a user namespace (clone)", script: p("clone-newuser"), control: "always", want: "(EPERM)"},
		{name: "create a user namespace (unshare)", script: `unshare --user --map-root-user true && echo ESCAPED`, control: "always"},
		{name: "create a network namespace", script: p("syscall", "unshare-net"), control: "root", want: "(EPERM)"},
		{name: "join a namespace", script: p("syscall", "setns"), control: "root", want: "(EPERM)"},
		{name: "mount", script: p("syscall", "mount"), control: "root", want: "(EPERM)"},
		{name: "load a kernel module", script: p("syscall", "finit_module"), want: "(EPERM)"},
		{name: "bpf", script: p("syscall", "bpf"), control: "root", want: "(EPERM)"},
		{name: "keyctl", script: p("syscall", "keyctl"), control: "always", want: "(EPERM)"},
		{name: "io_uring", script: p("syscall", "io_uring_setup"), control: "root", want: "(EPERM)"},
		{name: "perf_event_open", script: p("syscall", "perf_event_open"), control: "root", want: "(EPERM)"},
		{name: "userfaultfd", script: p("syscall", "userfaultfd"), control: "root", want: "(EPERM)"},
		{name: "read another user's private file (root's capabilities)", script: `cat theirs`, control: "root", pre: needRoot},
		{name: "chown a file (root's capabilities)", script: `echo x > owned && chown 65534 owned && echo ESCAPED`, control: "root", pre: needRoot},
		{name: "clone3 (flags a filter cannot see)", script: p("syscall", "clone3"), control: "always", want: "(ENOSYS)"},
		{name: "netlink socket", script: p("socket", strconv.Itoa(unix.AF_NETLINK), strconv.Itoa(unix.SOCK_RAW)), control: "always", want: "(EPERM)"},
		{name: "packet socket", script: p("socket", strconv.Itoa(unix.AF_PACKET), strconv.Itoa(unix.SOCK_DGRAM)), control: "root", want: "(EPERM)"},
		{name: "vsock socket", script: p("socket", strconv.Itoa(unix.AF_VSOCK), strconv.Itoa(unix.SOCK_STREAM)), want: "(EPERM)"},
	}
	if abi < 9 {
		as = append(as, attack{name: "unix socket", script: p("socket", strconv.Itoa(unix.AF_UNIX), strconv.Itoa(unix.SOCK_STREAM)), control: "always", want: "(EPERM)"})
	}
	if runtime.GOARCH == "amd64" {
		as = append(as, attack{
			name:    "system call through the 32-bit ABI",
			script:  `./int80; [ $? = 0 ] && echo ESCAPED`,
			control: "always",
			pre: func(e *escapeEnv) string {
				if err := exec.Command(filepath.Join(e.work, "int80")).Run(); err != nil {
					return fmt.Sprintf("the kernel runs no 32-bit system calls here (%v)", err)
				}
				return ""
			},
		})
	}
	return as
}

// TestLandlockEscapes tries to get out of the sandbox every way the issue
// lists and some more. Each attack prints ESCAPED when it gets through; in
// the sandbox none may, and where it is safe, the same attack run with
// Local must get through, to show that the test can fail.
func TestLandlockEscapes(t *testing.T) {
	abi := needLandlock(t)
	l, work := newLandlock(t, &sandbox.Landlock{})
	e := setupEscapes(t, work)
	probe := copyProbe(t, work)
	if runtime.GOARCH == "amd64" {
		if err := os.WriteFile(filepath.Join(work, "int80"), int80ELF(), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := e.environ(probe)
	for _, a := range attacks(abi) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			if a.pre != nil {
				if why := a.pre(e); why != "" {
					t.Skip(why)
				}
			}
			c := sandbox.Cmd{Script: a.script, Dir: work, Env: env, Timeout: 30 * time.Second}
			res, err := l.Exec(t.Context(), c)
			if err != nil {
				t.Fatalf("Exec: %v", err)
			}
			if strings.Contains(res.Stdout, "ESCAPED") {
				t.Errorf("got out of the sandbox:\nstdout: %s\nstderr: %s", res.Stdout, res.Stderr)
			}
			if !strings.Contains(res.Stdout, a.want) {
				t.Errorf("refused, but not as expected: want %q in stdout\nstdout: %s\nstderr: %s", a.want, res.Stdout, res.Stderr)
			}
			if a.after != nil {
				if err := a.after(e); err != nil {
					t.Error(err)
				}
			}
			if a.control == "always" || a.control == "root" && os.Geteuid() == 0 {
				res, err := (&sandbox.Local{}).Exec(t.Context(), c)
				if err != nil {
					t.Fatalf("control Exec: %v", err)
				}
				if !strings.Contains(res.Stdout, "ESCAPED") {
					t.Errorf("the attack fails even without the sandbox, so this test shows nothing:\nstdout: %s\nstderr: %s", res.Stdout, res.Stderr)
				}
			}
		})
	}
}
