package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
)

// Append opens an existing session's log to continue it (rein resume): the
// next record follows the last one in sequence and in the hash chain. It
// refuses a log whose last line is incomplete — a crash while writing with
// flush durability — since continuing would hide the break; verify it first.
func Append(path string, opts ...Option) (*Writer, []Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("audit log: %w", err)
	}
	if len(data) == 0 {
		return nil, nil, fmt.Errorf("audit log %s is empty: there is no session to continue", path)
	}
	if data[len(data)-1] != '\n' {
		return nil, nil, fmt.Errorf("audit log %s ends with an incomplete line (rein was stopped while writing it); check it with rein audit verify", path)
	}
	var recs []Record
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
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("audit log: %w", err)
	}
	w := NewWriter(f, recs[0].Session, opts...)
	w.path = path
	w.seq = recs[len(recs)-1].Seq
	sum := sha256.Sum256(last)
	w.prev = hex.EncodeToString(sum[:])
	return w, recs, nil
}
