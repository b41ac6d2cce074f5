package sandbox

import "testing"

func TestOOMKillsFile(t *testing.T) {
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
		{"a mount of a sub-tree", v1Cgroup, subMounts, "/sys/fs/cgroup/memory/abc/memory.oom_control"},
		{"escaped mount point", v2Cgroup, escMounts, "/sys/fs/cg roup/system.slice/docker-abc.scope/memory.events"},
		{"no cgroup mount", v2Cgroup, "", ""},
	} {
		if got := oomKillsFile([]byte(c.cgroup), []byte(c.mounts)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
