package main

import (
	"os"
	"runtime/debug"
	"time"
)

// Start-up holds the garbage collector back: from main to the first model
// request rein allocates a few megabytes (the CLI, the config, the tools'
// schemas, the sandbox's setup) that it mostly keeps, and the collector
// would run at every doubling of that small heap, about a tenth of the
// time to the first request (docs/BENCHMARKS.md). For startHold after
// main starts it runs only if the heap reaches startHeap; then the
// settings are as they were. A GOGC or GOMEMLIMIT of the user's is left
// alone.
const (
	startHold = 500 * time.Millisecond
	startHeap = 256 << 20
)

// holdGC holds the collector back for startHold.
func holdGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(startHeap)
	time.AfterFunc(startHold, func() {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(percent)
	})
}
