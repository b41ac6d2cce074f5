package docker

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

// TestDockerEscapes attacks the container from inside: every attempt to
// reach the host (its files, network, processes) or to exhaust it must
// fail, and ordinary work must still succeed.
func TestDockerEscapes(t *testing.T) {
	t.Parallel()
	root := tempDir(t)
	work := filepath.Join(root, "work")
	outside := filepath.Join(root, "outside")
	secret := "TOPSECRET-" + randomHex(8)
	for _, d := range []string{work, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(secret), 0o644))
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(work, "link-file")))
	must(os.Symlink(outside, filepath.Join(work, "link-dir")))
	must(os.Symlink("../outside/secret.txt", filepath.Join(work, "rel-link")))

	// A listener on the host's loopback and one on all its addresses.
	var accepted atomic.Int32
	listen := func(addr string) int {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Close()
			}
		}()
		return ln.Addr().(*net.TCPAddr).Port
	}
	loPort, anyPort := listen("127.0.0.1:0"), listen(":0")
	var hostIPs []string
	addrs, err := net.InterfaceAddrs()
	must(err)
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			hostIPs = append(hostIPs, n.IP.String())
		}
	}

	// A host process holding a secret in its environment.
	victim := exec.Command("sleep", "300")
	victim.Env = []string{"VICTIM_SECRET=" + secret}
	must(victim.Start())
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	hostPID := victim.Process.Pid

	e, _ := start(t, Options{WorkDir: work, PidsLimit: 64, TmpSize: "16m", Memory: "256m"})

	type check func(t *testing.T, res sandbox.Result)
	fails := func(t *testing.T, res sandbox.Result) {
		if res.ExitCode == 0 {
			t.Errorf("succeeded: %+v", res)
		}
	}
	noSecret := func(t *testing.T, res sandbox.Result) {
		if strings.Contains(res.Stdout+res.Stderr, secret) {
			t.Errorf("the secret leaked: %+v", res)
		}
	}
	says := func(want string) check {
		return func(t *testing.T, res sandbox.Result) {
			if res.Stdout != want {
				t.Errorf("stdout %q, want %q (stderr %q)", res.Stdout, want, res.Stderr)
			}
		}
	}
	attacks := []struct {
		name   string
		script string
		checks []check
	}{
		{"read a file outside the work dir", "cat " + filepath.Join(outside, "secret.txt"), []check{fails, noSecret}},
		{"list outside the work dir", "ls " + outside, []check{fails}},
		{"read through .. from the work dir", "cat ../outside/secret.txt", []check{fails, noSecret}},
		{"read /etc/shadow", "cat /etc/shadow", []check{fails, noSecret}},
		{"host's /etc is not there", "ls /etc; cat /etc/passwd /etc/os-release", []check{fails}},
		{"write to /", "echo x > /evil", []check{fails}},
		{"write to /etc", "echo x > /etc/evil", []check{fails}},
		{"replace a binary", "rm -f /bin/ls || echo x > /bin/ls", []check{fails}},
		{"write to /proc/sys", "echo 1 > /proc/sys/kernel/sysrq", []check{fails}},
		{"write to /sys", "echo 1 > /sys/kernel/profiling", []check{fails}},
		{"mount a file system", "mkdir -p /tmp/m && mount -t tmpfs x /tmp/m", []check{fails}},
		{"follow a symlinked file", "cat link-file", []check{fails, noSecret}},
		{"follow a relative symlink", "cat rel-link", []check{fails, noSecret}},
		{"follow a symlinked dir", "cat link-dir/secret.txt", []check{fails, noSecret}},
		{"list a symlinked dir", "ls link-dir/", []check{fails}},
		{"hard-link a file outside", "ln " + filepath.Join(outside, "secret.txt") + " h", []check{fails}},
		{"no capabilities, no new privileges", "grep -E '^(CapEff|CapPrm|NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\\t' ' '",
			[]check{says("CapPrm: 0000000000000000\nCapEff: 0000000000000000\nNoNewPrivs: 1\nSeccomp: 2\n")}},
		{"connect to the host's loopback", fmt.Sprintf("nc -w 2 127.0.0.1 %d </dev/null", loPort), []check{fails}},
		{"connect to the host's addresses", fmt.Sprintf("ok=0; for a in %s; do nc -w 2 $a %d </dev/null && ok=1; done; exit $((1-ok))", strings.Join(hostIPs, " "), anyPort), []check{fails}},
		{"fetch from the host", fmt.Sprintf("wget -q -T 2 -O - http://127.0.0.1:%d/", loPort), []check{fails}},
		{"no network but loopback", "ls /sys/class/net", []check{says("lo\n")}},
		{"resolve a name", "nslookup example.com", []check{fails}},
		{"reach the internet by address", "wget -q -T 3 -O - http://1.1.1.1/", []check{fails}},
		{"ptrace init: its memory map", "head -1 /proc/1/maps", []check{fails}},
		{"ptrace init: its memory", "dd if=/proc/1/mem bs=4096 skip=1024 count=1 of=/dev/null", []check{fails}},
		{"read init's environment", "cat /proc/1/environ", []check{fails}},
		{"read the host process's environment", fmt.Sprintf("cat /proc/%d/environ", hostPID), []check{fails, noSecret}},
		{"search every environment in /proc", "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep VICTIM", []check{fails, noSecret}},
		{"signal the host process", fmt.Sprintf("kill -0 %d", hostPID), []check{fails}},
		{"signal the test process", fmt.Sprintf("kill -0 %d", os.Getpid()), []check{fails}},
		{"signal init", "kill -s KILL 1", []check{fails}},
		{"the docker socket", "for f in /var/run/docker.sock /run/docker.sock /run/containerd/containerd.sock; do [ -e $f ] && echo $f; done; :", []check{says("")}},
		{"host devices", "for f in /dev/sda /dev/vda /dev/nvme0n1 /dev/mem /dev/kmem /dev/kmsg /dev/port; do [ -e $f ] && echo $f; done; :", []check{says("")}},
		// Ordinary work goes on.
		{"a pipeline", "printf 'b\\na\\n' | sort | tr a-z A-Z", []check{says("A\nB\n")}},
		{"write in the work dir", "echo data > made && cat made", []check{says("data\n")}},
		{"write in /tmp", "echo t > /tmp/t && cat /tmp/t", []check{says("t\n")}},
	}
	t.Run("attacks", func(t *testing.T) {
		for _, c := range attacks {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				res, err := e.Exec(t.Context(), sandbox.Cmd{Script: c.script, Dir: work, Timeout: 30 * time.Second})
				if err != nil {
					t.Fatalf("Exec: %v", err)
				}
				for _, check := range c.checks {
					check(t, res)
				}
			})
		}
	})
	if n := accepted.Load(); n > 0 {
		t.Errorf("the host's listeners accepted %d connections from the container", n)
	}

	// Exhaustion, one at a time: each would starve the others.
	t.Run("limits", func(t *testing.T) {
		res := run(t, e, work, `cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max \
	/sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null; df -m /tmp | tail -1 | tr -s ' ' | cut -d' ' -f2`)
		if want := "64\n268435456\n16\n"; res.Stdout != want {
			t.Errorf("pids, memory and /tmp limits in the container:\n%s\nwant\n%s", res.Stdout, want)
		}
	})
	t.Run("fill /tmp", func(t *testing.T) {
		res := run(t, e, work, "dd if=/dev/zero of=/tmp/big bs=1M count=64; s=$?; rm -f /tmp/big; exit $s")
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, "No space left") {
			t.Errorf("filling /tmp: %+v", res)
		}
	})
	t.Run("fork bomb", func(t *testing.T) {
		res, err := e.Exec(t.Context(), sandbox.Cmd{Script: "b() { b | b & }; b; sleep 100", Dir: work, Timeout: 3 * time.Second})
		if err != nil {
			t.Fatalf("Exec: %v", err)
		}
		if !res.TimedOut || res.ExitCode != -1 || res.Signal == "" {
			t.Errorf("fork bomb: %+v; want it stopped at its timeout", res)
		}
		if left := processes(t, e, work); len(left) > 0 {
			t.Errorf("%d processes left after the fork bomb was stopped, first %q", len(left), left[0])
		}
		if res := run(t, e, work, "echo alive"); res.Stdout != "alive\n" {
			t.Errorf("the container does not work after the fork bomb: %+v", res)
		}
	})
}
