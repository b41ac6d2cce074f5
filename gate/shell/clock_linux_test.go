//go:build linux

package shell

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadClock returns the CPU time the calling thread has used: time the
// thread waits for a CPU on a loaded machine is not counted. The caller
// locks its goroutine to the thread.
func threadClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}
