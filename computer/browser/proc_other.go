//go:build !linux

package browser

import "os/exec"

// killWithParent does nothing where there is no parent-death signal.
func killWithParent(*exec.Cmd) {}
