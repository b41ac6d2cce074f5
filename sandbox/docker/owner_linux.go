package docker

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// currentOwner identifies this process: its pid, the boot it runs in and
// its start time, so that a reused pid is not taken for it.
func currentOwner() owner {
	o := owner{pid: os.Getpid(), host: hostname()}
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		if st, err := procStart(o.pid); err == nil {
			o.boot, o.start = strings.TrimSpace(string(b)), st
		}
	}
	return o
}

// alive reports whether the process that labels name still runs: same
// boot, pid present, same start time. Labels from another machine, or too
// few to judge, count as alive: GC removes only what it knows is orphaned.
func (o owner) alive(l map[string]string) bool {
	if l[LabelHost] != o.host || o.boot == "" {
		return true
	}
	pid, err := strconv.Atoi(l[LabelPID])
	if err != nil || pid <= 0 || l[LabelBoot] == "" || l[LabelStart] == "" {
		return true
	}
	if l[LabelBoot] != o.boot {
		return false // the machine rebooted since
	}
	st, err := procStart(pid)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	return err != nil || st == l[LabelStart]
}

// procStart returns field 22 of /proc/pid/stat, the start time in clock
// ticks since boot.
func procStart(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return "", errors.New("malformed /proc stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 { // fields 3… after the name; start time is field 22
		return "", errors.New("malformed /proc stat")
	}
	return f[19], nil
}
