//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// findPidsCgroup returns the directory under which rein can make a pids
// cgroup for each command: rein's own cgroup in the v2 hierarchy when it
// delegates the pids controller to its children, else rein's cgroup in the
// v1 pids hierarchy; "" when neither is there or rein may not write it
// (not root, a read-only /sys/fs/cgroup).
func findPidsCgroup() string { return findCgroup("pids") }

// findMemoryCgroup is findPidsCgroup for the memory controller.
func findMemoryCgroup() string { return findCgroup("memory") }

func findCgroup(controller string) string {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	var v1, v2 string // rein's cgroup path in each hierarchy
	for line := range strings.Lines(string(own)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case slices.Contains(strings.Split(parts[1], ","), controller):
			v1 = parts[2]
		}
	}
	var cands []string
	if v2 != "" {
		if dir := cgroupDir(mounts, "cgroup2", "", v2); dir != "" {
			ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
			if err == nil && slices.Contains(strings.Fields(string(ctl)), controller) {
				cands = append(cands, dir)
			}
		}
	}
	if v1 != "" {
		if dir := cgroupDir(mounts, "cgroup", controller, v1); dir != "" {
			cands = append(cands, dir)
		}
	}
	for _, dir := range cands {
		if probe, err := os.MkdirTemp(dir, "rein-probe-"); err == nil {
			_ = os.Remove(probe)
			return dir
		}
	}
	return ""
}

// cgroupDir finds in mountinfo the mount of fstype (carrying super option
// opt, if set) and returns where the cgroup path lives under it, or "".
func cgroupDir(mountinfo []byte, fstype, opt, path string) string {
	for line := range strings.Lines(string(mountinfo)) {
		// id parent major:minor root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 || g[0] != fstype {
			continue
		}
		if opt != "" && !slices.Contains(strings.Split(g[2], ","), opt) {
			continue
		}
		root, mnt := unescapeMount(f[3]), unescapeMount(f[4])
		rel, ok := strings.CutPrefix(path, root)
		if !ok || rel != "" && root != "/" && rel[0] != '/' {
			continue
		}
		return filepath.Join(mnt, rel)
	}
	return ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sweepCgroups removes the command cgroups under base that a rein which
// is gone left behind (it crashed before removing them). A cgroup that
// still holds a process is not removed (rmdir fails).
func sweepCgroups(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue
		}
		_ = os.Remove(filepath.Join(base, e.Name()))
	}
}

// pidsCgroup is one command's cgroup: a pids cgroup and, when rein found
// a memory controller to use, a memory cgroup (the same directory on
// cgroup v2, another hierarchy on v1).
type pidsCgroup struct {
	dir string
	mem string // the memory cgroup, or ""
	// memLimit is the memory limit in force in mem, in bytes.
	memLimit int64
}

// cgroupPrefix starts the name of every command's cgroup, followed by the
// pid of the rein that made it.
const cgroupPrefix = "rein-sandbox-"

// newPidsCgroup makes a cgroup under base with pids.max = max.
func newPidsCgroup(base string, max int) (*pidsCgroup, error) {
	dir, err := os.MkdirTemp(base, cgroupPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("pids cgroup: %w", err)
	}
	return &pidsCgroup{dir: dir}, nil
}

// limitMemory bounds the memory of the cgroup's processes to limit bytes,
// swap excluded (no swap at all), in a memory cgroup under base: the pids
// cgroup itself when base is the same v2 directory, else a new one in the
// v1 memory hierarchy.
func (c *pidsCgroup) limitMemory(base string, limit int64) error {
	v := []byte(strconv.FormatInt(limit, 10))
	if base == filepath.Dir(c.dir) { // v2: one directory, every controller
		c.mem = c.dir
		if err := os.WriteFile(filepath.Join(c.mem, "memory.max"), v, 0); err != nil {
			return fmt.Errorf("memory cgroup: %w", err)
		}
		if err := os.WriteFile(filepath.Join(c.mem, "memory.swap.max"), []byte("0"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("memory cgroup: %w", err)
		}
		c.memLimit = limit
		return nil
	}
	dir, err := os.MkdirTemp(base, cgroupPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return fmt.Errorf("memory cgroup: %w", err)
	}
	c.mem = dir
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), v, 0); err != nil {
		return fmt.Errorf("memory cgroup: %w", err)
	}
	// memory and swap together: the same, so no swap. Absent where the
	// kernel accounts no swap.
	if err := os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), v, 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("memory cgroup: %w", err)
	}
	c.memLimit = limit
	return nil
}

// oomKilled reports whether the kernel's OOM killer killed a process of
// the cgroup for reaching its memory limit.
func (c *pidsCgroup) oomKilled() bool { return c.oomKills() > 0 }

// oomKills is how many processes of the cgroup the kernel's OOM killer
// killed for reaching its memory limit; 0 for a nil cgroup or without a
// memory controller.
func (c *pidsCgroup) oomKills() int {
	if c == nil || c.mem == "" {
		return 0
	}
	name := "memory.oom_control" // v1
	if c.mem == c.dir {
		name = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(c.mem, name))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), "oom_kill "); ok {
			v, _ := strconv.Atoi(n)
			return v
		}
	}
	return 0
}

// killAll kills every process in the cgroup, also those that left the
// command's process group. cgroup.kill (v2) does it at once; otherwise
// each listed process is opened as a pidfd and killed through it only if
// it is still listed, so a recycled pid never gets the signal.
func (c *pidsCgroup) killAll() {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err == nil {
		return
	}
	c.killAllBut(0)
}

// killAllBut kills every process in the cgroup except those of keep (0:
// none), each through a pidfd opened while it is still listed, so a
// recycled pid never gets the signal.
func (c *pidsCgroup) killAllBut(keep ...int) {
	for range 100 { // a fork in flight can add a process; the pids limit bounds them
		pids := slices.DeleteFunc(c.procs(), func(p int) bool { return slices.Contains(keep, p) })
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				continue // gone already
			}
			if slices.Contains(c.procs(), pid) {
				_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			}
			_ = unix.Close(fd)
		}
	}
}

// procs lists the processes in the cgroup.
func (c *pidsCgroup) procs() []int {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if pid, err := strconv.Atoi(sc.Text()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// remove deletes the cgroup once the processes killed in it are gone,
// waiting at most a second; a cgroup still busy then is left behind.
func (c *pidsCgroup) remove() {
	deadline := time.Now().Add(time.Second)
	for {
		err := os.Remove(c.dir)
		if err == nil || !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			break
		}
		c.killAll()
		time.Sleep(time.Millisecond)
	}
	if c.mem != "" && c.mem != c.dir {
		for {
			err := os.Remove(c.mem)
			if err == nil || !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// KillInCgroupBut kills every process the cgroup directory dir lists in
// its cgroup.procs (a container's, say) except the pids of keep, each
// through a pidfd opened while it is still listed, so a recycled pid
// never gets the signal.
func KillInCgroupBut(dir string, keep ...int) {
	(&pidsCgroup{dir: dir}).killAllBut(keep...)
}
