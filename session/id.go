// Package session holds what belongs to one run of an agent and outlives a
// single call: its identity, and later the abort controller, file rollback and
// session credentials.
package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// NewID returns a fresh session id: the UTC start time, sortable, and 32
// random bits, e.g. "20261202T140501Z-3fa9c2d1". Ids name audit files and
// directories, so they contain only [0-9A-Za-z-].
func NewID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// CheckID rejects ids that could not safely name a file: empty, too long, or
// holding anything but letters, digits and dashes.
func CheckID(id string) error {
	if !validID(id) {
		return fmt.Errorf("session id %q: use letters, digits and dashes, at most 128 characters", id)
	}
	return nil
}

// validID reports whether id is 1 to 128 letters, digits and dashes, not
// starting with a dash. (A loop, not a regular expression: the pattern's
// bounded repetition compiled into 1,400 allocations at every start.)
func validID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}
