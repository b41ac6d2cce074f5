package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/reinhq/rein/agent/stop"
	"github.com/reinhq/rein/model"
)

// MaxLine is the longest line Verify and Show read. A longer line is
// reported as a bad line, not buffered: rein never writes one.
const MaxLine = 64 << 20

// Report is what Verify found in a log.
type Report struct {
	// Lines is the number of lines in the log, a cut last line included.
	Lines int `json:"lines"`
	// Records is the number of records read (padding lines not counted).
	Records int `json:"records"`
	// Session is the session id of the first line ("" when it has none).
	Session string `json:"session"`
	// FirstBad is the first line (from 1) that breaks the log's rules, or 0
	// when the log is intact. A line is bad when it cannot be what the Writer
	// wrote after the lines before it; when a line was edited, that is
	// often the line after it, whose prev no longer matches.
	FirstBad int `json:"first_bad"`
	// Problem says what is wrong with line FirstBad.
	Problem string `json:"problem,omitempty"`
	// Complete is true when the log is intact and ends with a stop record.
	// An intact log without one belongs to a session that was interrupted,
	// or lost its last line: the file alone cannot tell which.
	Complete bool `json:"complete"`
	// Head is the SHA-256 of the last line when the log is intact. Kept
	// somewhere else, it lets a later check notice a removed or rewritten
	// last line, which no hash in the file covers.
	Head string `json:"head,omitempty"`
}

// Intact reports whether every line of the log kept the rules.
func (r Report) Intact() bool { return r.FirstBad == 0 }

// header is the part of a record that the chain rules look at.
type header struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Session string    `json:"session"`
	Type    Type      `json:"type"`
	Prev    string    `json:"prev"`
	// The typed fields are read too: a decision, effect, stop reason or
	// source kind that names none of the known ones is damage, never a
	// guess.
	Decision Decision     `json:"decision"`
	Effect   Effect       `json:"effect"`
	Stop     stop.Reason  `json:"stop"`
	Source   model.Source `json:"source"`
}

// Verify reads a log and checks, line by line, that it is what a Writer
// wrote: every line a whole JSON object ending in a newline, seq 1, 2, 3 …,
// one session id, times that never go back, and each prev the SHA-256 of the
// line before it (the first: Anchor of its session). It stops checking at
// the first bad line but counts every line. The error is only for failing
// to read r; a broken log is a Report with FirstBad set.
//
// What Verify cannot see: a log cut after a whole line (Complete is false,
// but an interrupted session looks the same), a last line replaced by
// another with the same seq, session and prev and a time no earlier, and a
// log rewritten from some line to its end with a freshly computed chain.
// Keep Head elsewhere to catch the first two.
func Verify(r io.Reader) (Report, error) {
	var (
		rep Report
		v   verifier
	)
	lr := newLineReader(r)
	for {
		line, ended, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		rep.Lines++
		if err != nil && !errors.Is(err, errLineTooLong) {
			return rep, fmt.Errorf("audit log: read line %d: %w", rep.Lines, err)
		}
		if rep.FirstBad != 0 {
			continue
		}
		if err == nil && ended && Padding(line) {
			continue // page alignment: no record, not in the chain (a last one without its newline is cut)
		}
		var problem string
		if errors.Is(err, errLineTooLong) {
			problem = fmt.Sprintf("longer than %d MiB: not a record rein writes", MaxLine>>20)
		} else {
			problem = v.check(rep.Lines, line, ended)
		}
		if problem != "" {
			rep.FirstBad, rep.Problem = rep.Lines, problem
		}
	}
	rep.Session = v.session
	rep.Records = v.records
	switch {
	case v.records == 0 && rep.FirstBad == 0:
		rep.FirstBad, rep.Problem = 1, "the log is empty: not even a session_start record"
	case rep.FirstBad == 0:
		rep.Complete = v.lastType == Stop
		rep.Head = string(v.want[:]) // the hash the next line would carry
	}
	return rep, nil
}

// verifier carries what the next line is checked against.
type verifier struct {
	records  int // records seen, padding lines not counted
	lastLine int // the line of the last record
	session  string
	want     [64]byte // hex of the prev the next line must carry
	lastTime time.Time
	lastType Type
}

// check returns what is wrong with line n, or "" when it keeps the rules.
func (v *verifier) check(n int, line []byte, ended bool) string {
	if !ended {
		if json.Valid(line) {
			return "incomplete last line: the record has no newline after it (the write was cut)"
		}
		return "incomplete last line: a cut record (the write did not finish)"
	}
	v.records++
	k := v.records // this record's place: its seq; n is its line in the file
	prevLine := v.lastLine
	v.lastLine = n
	var h header
	if line[0] != '{' {
		return "not a JSON object"
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return "not a record: " + err.Error()
	}
	if k == 1 {
		if h.Session == "" {
			return "no session id"
		}
		v.session = h.Session
		copy(v.want[:], Anchor(h.Session))
	}
	switch {
	case h.Session != v.session:
		return fmt.Sprintf("session %q, want %q (the session of the first record)", h.Session, v.session)
	case h.Seq > uint64(k):
		return fmt.Sprintf("seq %d, want %d: a record before it was removed, or this one was moved or changed", h.Seq, k)
	case h.Seq < uint64(k):
		return fmt.Sprintf("seq %d, want %d: this record was moved, repeated or changed", h.Seq, k)
	case h.Prev != string(v.want[:]) && k == 1:
		return "prev is not the anchor of session " + h.Session + ": records before it were removed, or it was changed"
	case h.Prev != string(v.want[:]):
		return fmt.Sprintf("prev is not the SHA-256 of line %d: line %d was changed, or a record was removed or put in between them", prevLine, prevLine)
	case h.Time.IsZero():
		return "no time"
	case h.Time.Before(v.lastTime):
		return fmt.Sprintf("time %s is before line %d's %s: records were moved, or the clock was set back",
			h.Time.Format(time.RFC3339Nano), prevLine, v.lastTime.Format(time.RFC3339Nano))
	}
	sum := sha256.Sum256(line)
	hex.Encode(v.want[:], sum[:])
	v.lastTime, v.lastType = h.Time, h.Type
	return ""
}

var errLineTooLong = errors.New("line too long")

// lineReader reads lines of any length up to MaxLine without copying the
// common ones.
type lineReader struct {
	br  *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	size := 64 << 10
	if l, ok := r.(interface{ Len() int }); ok {
		// A log in memory (bytes.Reader, strings.Reader) needs no buffer
		// larger than itself: a fuzzer or a test verifies many small ones.
		size = min(size, max(l.Len()+1, 16))
	}
	return &lineReader{br: bufio.NewReaderSize(r, size)}
}

// next returns the next line without its newline and whether it had one.
// The line is valid until the next call. At the end it returns io.EOF; a
// line longer than MaxLine is skipped to its end and reported as
// errLineTooLong.
func (lr *lineReader) next() (line []byte, ended bool, err error) {
	lr.buf = lr.buf[:0]
	tooLong := false
	for {
		chunk, err := lr.br.ReadSlice('\n')
		switch {
		case err == nil && len(lr.buf) == 0 && !tooLong:
			return chunk[:len(chunk)-1], true, nil
		case err == nil || errors.Is(err, bufio.ErrBufferFull):
			if !tooLong && len(lr.buf)+len(chunk) > MaxLine+1 {
				tooLong, lr.buf = true, lr.buf[:0]
			}
			if !tooLong {
				lr.buf = append(lr.buf, chunk...)
			}
			if err != nil {
				continue
			}
			if tooLong {
				return nil, true, errLineTooLong
			}
			return lr.buf[:len(lr.buf)-1], true, nil
		case errors.Is(err, io.EOF):
			if tooLong {
				return nil, false, errLineTooLong
			}
			lr.buf = append(lr.buf, chunk...)
			if len(lr.buf) == 0 {
				return nil, false, io.EOF
			}
			if len(lr.buf) > MaxLine {
				return nil, false, errLineTooLong
			}
			return lr.buf, false, nil
		default:
			return nil, false, err
		}
	}
}
