package docker

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// oomFile returns the file of the container's memory cgroup that counts
// the kernel's OOM kills (memory.events on cgroup v2, memory.oom_control on
// v1), as this process sees the cgroup file system; "" when it cannot be
// found, and OOM kills then go unreported rather than guessed.
func (e *Executor) oomFile(ctx context.Context, id string) string {
	ictx, cancel := context.WithTimeout(ctx, signalTimeout)
	defer cancel()
	out, err := e.run(ictx, "inspect", "--format", "{{.State.Pid}}", id)
	if err != nil {
		return ""
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || pid <= 0 {
		return ""
	}
	cg, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return ""
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	return memoryEventsFile(cg, mi)
}

// memoryEventsFile finds, from a process's /proc/PID/cgroup and this
// process's mountinfo, the file that counts its memory cgroup's OOM kills.
// A v1 memory controller wins over the v2 hierarchy: where both exist, v1
// is the one that enforces the limit.
func memoryEventsFile(cgroup, mountinfo []byte) string {
	var v1, v2 string
	for line := range strings.Lines(string(cgroup)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case hasWord(parts[1], "memory"):
			v1 = parts[2]
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	var v1Mount, v2Mount string
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 || f[3] != "/" {
			continue // a cgroup mount of a sub-tree: paths would not line up
		}
		switch {
		case g[0] == "cgroup" && hasWord(g[2], "memory") && v1Mount == "":
			v1Mount = unescape(f[4])
		case g[0] == "cgroup2" && v2Mount == "":
			v2Mount = unescape(f[4])
		}
	}
	switch {
	case v1 != "" && v1Mount != "":
		return filepath.Join(v1Mount, filepath.Clean("/"+v1), "memory.oom_control")
	case v2 != "" && v2Mount != "":
		return filepath.Join(v2Mount, filepath.Clean("/"+v2), "memory.events")
	}
	return ""
}

// oomKills reads the OOM kill count from file; -1 when it cannot.
func oomKills(file string) int64 {
	if file == "" {
		return -1
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), "oom_kill "); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				return -1
			}
			return v
		}
	}
	return -1
}

func hasWord(list, w string) bool {
	for s := range strings.SplitSeq(list, ",") {
		if s == w {
			return true
		}
	}
	return false
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
