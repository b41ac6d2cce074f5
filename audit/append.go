package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// sessionOfPath is the session id a log's file name gives (SESSION.jsonl).
func sessionOfPath(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".jsonl")
}

// Append opens an existing session's log to continue it (rein resume): the
// next record follows the last one in sequence and in the hash chain. It
// takes the session's lock before it reads a byte, and holds it until
// Close: a second Append, or an Append while the session still runs,
// fails with a *BusyError (errors.Is ErrBusy) and reads nothing, so two
// processes can never continue the same chain from the same point.
//
// It refuses a log whose last line is incomplete (a *CutError: a crash
// while writing a record longer than a page, or with flush durability),
// since continuing would hide the break; rein audit repair drops it.
func Append(path string, opts ...Option) (w *Writer, recs []Record, err error) {
	session := sessionOfPath(path)
	lk, err := lock(path, session, lockResume)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, unlock(lk))
		}
	}()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("audit log: %w", err)
	}
	if len(data) == 0 {
		return nil, nil, fmt.Errorf("audit log %s is empty: there is no session to continue", path)
	}
	// Only a log that verifies is continued: a chain appended to a broken
	// one would look whole from the new records on.
	switch cut, isCut, err := FindCut(data); {
	case err != nil:
		return nil, nil, fmt.Errorf("audit log %s: %w", path, err)
	case isCut:
		return nil, nil, &CutError{Path: path, Cut: cut}
	}
	var last []byte
	for line := range bytes.Lines(data) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		if Padding(line) {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, nil, fmt.Errorf("audit log %s: line %d is not a record: %v", path, len(recs)+1, err)
		}
		recs = append(recs, r)
		last = line
	}
	if len(recs) == 0 {
		return nil, nil, fmt.Errorf("audit log %s holds no record: there is no session to continue", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("audit log: %w", err)
	}
	w = NewWriter(f, recs[0].Session, opts...)
	w.path, w.lock = path, lk
	w.seq = recs[len(recs)-1].Seq
	sum := sha256.Sum256(last)
	w.prev = hex.EncodeToString(sum[:])
	return w, recs, nil
}
