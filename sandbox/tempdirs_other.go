//go:build !linux

package sandbox

import "os"

// MakeHeld makes a temp dir named for kind. Off Linux it holds no lock
// (the nil file), and nothing sweeps it.
func MakeHeld(kind string) (string, *os.File, error) {
	dir, err := os.MkdirTemp("", "rein-"+kind+"-h")
	return dir, nil, err
}

// SweepHeld does nothing off Linux.
func SweepHeld() int { return 0 }
