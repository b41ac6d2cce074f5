// Package quietterm stops bubbletea v1 from querying the terminal when rein
// starts. bubbletea's package init asks lipgloss whether the terminal's
// background is dark; termenv then writes an OSC 11 and a cursor-position
// query to stdout, puts the terminal in non-canonical mode and reads the
// answer from it, for up to five seconds when nothing answers. Every rein
// command, not only the chat, would pay that, and the read would take what
// the person typed ahead. rein's styles use fixed colours and never ask.
//
// termenv does not query a terminal whose TERM is "dumb". This package's
// init sets TERM=dumb, and Restore (the first thing main does) puts back
// the value rein was started with, before any child process or colour
// detection could see the change. It imports only syscall, so Go, which
// initialises the packages whose imports are ready in the order of their
// import paths, runs its init long before lipgloss's and bubbletea's (the
// binary's test TestNoTerminalQueryAtStart checks it).
package quietterm

import "syscall"

// original is TERM as rein was started, and whether it was set. It is set
// once, by init, before main runs.
var original struct {
	value string
	set   bool
	done  bool
}

func init() {
	original.value, original.set = syscall.Getenv("TERM")
	_ = syscall.Setenv("TERM", "dumb")
}

// Restore puts TERM back as rein was started. Call it first in main.
func Restore() {
	if original.done {
		return
	}
	original.done = true
	if original.set {
		_ = syscall.Setenv("TERM", original.value)
		return
	}
	_ = syscall.Unsetenv("TERM")
}
