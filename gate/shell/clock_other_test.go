//go:build !linux

package shell

import "time"

var clockStart = time.Now()

// threadClock is the wall clock where the thread's CPU clock is not read.
func threadClock() time.Duration { return time.Since(clockStart) }
