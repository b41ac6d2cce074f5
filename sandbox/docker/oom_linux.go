package docker

import (
	"context"
	"os"
	"strconv"
	"strings"

	"github.com/reinhq/rein/sandbox"
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
	return sandbox.OOMKillsFile(pid)
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
