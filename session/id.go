// Package session holds what belongs to one run of an agent and outlives a
// single call: its identity, and later the abort controller, file rollback and
// session credentials.
package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
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

var idPattern = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z-]{0,127}$`)

// CheckID rejects ids that could not safely name a file: empty, too long, or
// holding anything but letters, digits and dashes.
func CheckID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("session id %q: use letters, digits and dashes, at most 128 characters", id)
	}
	return nil
}
