//go:build !linux

package sandbox

// OOMKillsFile finds no cgroup off Linux.
func OOMKillsFile(pid int) string { return "" }
