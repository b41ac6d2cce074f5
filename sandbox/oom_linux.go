package sandbox

import (
	"os"
	"strconv"
	"strings"
)

// OOMKillsFile returns the file that counts the kernel's OOM kills in the
// memory cgroup of process pid (memory.oom_control on cgroup v1,
// memory.events on v2), as this process sees the cgroup file system; ""
// when it cannot be found. The docker backend reads it for its
// containers, as the landlock backend reads its own cgroup's.
func OOMKillsFile(pid int) string {
	cg, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return ""
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	return oomKillsFile(cg, mi)
}

// oomKillsFile finds the counter from a process's /proc/PID/cgroup and
// this process's mountinfo. A v1 memory controller wins over the v2
// hierarchy: where both exist, v1 is the one that enforces the limit.
func oomKillsFile(cgroup, mountinfo []byte) string {
	var v1, v2 string
	for line := range strings.Lines(string(cgroup)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case hasController(parts[1], "memory"):
			v1 = parts[2]
		}
	}
	if v1 != "" {
		if d := cgroupDir(mountinfo, "cgroup", "memory", v1); d != "" {
			return d + "/memory.oom_control"
		}
	}
	if v2 != "" {
		if d := cgroupDir(mountinfo, "cgroup2", "", v2); d != "" {
			return d + "/memory.events"
		}
	}
	return ""
}

func hasController(list, c string) bool {
	for s := range strings.SplitSeq(list, ",") {
		if s == c {
			return true
		}
	}
	return false
}
