//go:build !linux

package approve

import "errors"

var errNoTerm = errors.New("terminal control is implemented for Linux only")

// On other systems nothing is taken for a terminal: every approval is refused.
func isTTY(int) bool                  { return false }
func flushInput(int) (bool, error)    { return false, errNoTerm }
func termSize(int) (int, int, error)  { return 0, 0, errNoTerm }
func readable(int, int) (bool, error) { return false, errNoTerm }
func readFD(int, []byte) (int, error) { return 0, errNoTerm }
