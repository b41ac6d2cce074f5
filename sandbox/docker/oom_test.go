package docker

import (
	"path/filepath"
	"testing"
)

// TestDockerOOMReported is issue 14.7 for the docker backend: a command
// that reaches the container's memory limit is reported as killed for it,
// and the executor goes on; a command killed otherwise is not.
func TestDockerOOMReported(t *testing.T) {
	t.Parallel()
	e, work := start(t, Options{Memory: "64m"})
	res := run(t, e, work, "dd if=/dev/zero of=/dev/null bs=200M count=1")
	if !res.OOMKilled || res.MemoryLimit != 64<<20 || res.Signal != "killed" {
		t.Errorf("a 200 MiB buffer under a 64 MiB limit: OOMKilled %v, MemoryLimit %d, Signal %q, exit %d; want an OOM kill at 64 MiB",
			res.OOMKilled, res.MemoryLimit, res.Signal, res.ExitCode)
	}
	for _, script := range []string{"dd if=/dev/zero of=/dev/null bs=1M count=4", "kill -s KILL $$", "sh -c 'kill -s KILL $$'"} {
		if res := run(t, e, work, script); res.OOMKilled {
			t.Errorf("%s: reported as an OOM kill: %+v", script, res)
		}
	}
	if res := run(t, e, work, "echo alive"); res.Stdout != "alive\n" {
		t.Errorf("after the OOM kill: %+v", res)
	}
}

func TestMemoryEventsFile(t *testing.T) {
	t.Parallel()
	const (
		v1Mounts = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
			"30 24 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
		v2Mounts   = "30 24 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
		subMounts  = "35 31 0:32 /docker /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		escMounts  = "30 24 0:27 / /sys/fs/cg\\040roup rw - cgroup2 cgroup2 rw\n"
		v1Cgroup   = "4:memory:/docker/abc\n0::/docker/abc\n"
		v2Cgroup   = "0::/system.slice/docker-abc.scope\n"
		joinCgroup = "4:cpu,memory:/docker/abc\n"
	)
	for _, c := range []struct{ name, cgroup, mounts, want string }{
		{"v1 wins in a hybrid", v1Cgroup, v1Mounts, "/sys/fs/cgroup/memory/docker/abc/memory.oom_control"},
		{"v2", v2Cgroup, v2Mounts, "/sys/fs/cgroup/system.slice/docker-abc.scope/memory.events"},
		{"joined v1 controllers", joinCgroup, "35 31 0:32 / /sys/fs/cgroup/cpu,memory rw - cgroup cgroup rw,cpu,memory\n", "/sys/fs/cgroup/cpu,memory/docker/abc/memory.oom_control"},
		{"a mount of a sub-tree is not used", v1Cgroup, subMounts, ""},
		{"escaped mount point", v2Cgroup, escMounts, "/sys/fs/cg roup/system.slice/docker-abc.scope/memory.events"},
		{"no cgroup mount", v2Cgroup, "", ""},
		{"path climbing out", "0::/../../etc\n", v2Mounts, "/sys/fs/cgroup/etc/memory.events"},
	} {
		if got := memoryEventsFile([]byte(c.cgroup), []byte(c.mounts)); got != filepath.FromSlash(c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
