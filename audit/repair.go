package audit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// cutHeader reads the seq, and the prev when it is all there, of the start
// of a record as the Writer writes it (seq, time, session, type, prev).
var cutHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\{"seq":([0-9]+),(?:"time":"[^"]*","session":"[^"]*","type":"[^"]*","prev":"([0-9a-f]{64})")?`)
})

// CutError is returned by Append for a log whose last line is a cut record:
// rein was killed while writing a record longer than a page (or with flush
// durability). Repair drops it.
type CutError struct {
	Path string
	Cut  Cut
}

func (e *CutError) Error() string {
	return fmt.Sprintf("the log %s ends in a cut record (%d bytes at offset %d: rein was stopped while writing it); "+
		"run `rein audit repair %s` to drop it (a copy is kept), then resume", e.Path, e.Cut.Size, e.Cut.Offset, e.Path)
}

// Cut is an incomplete last line: a record whose write did not finish.
type Cut struct {
	Offset int64 // where the line starts in the file
	Size   int   // its length in bytes
	// Head is how it starts, at most 80 bytes, on one line with control
	// characters and invalid UTF-8 escaped: safe to print.
	Head string
}

// FindCut checks data as Verify does and returns its cut last line. ok is
// false when the log is intact. When anything else breaks the log's rules
// (a changed, removed or reordered line, a cut line that is not the last),
// err says so: that is not a cut record, and nothing may be dropped.
func FindCut(data []byte) (c Cut, ok bool, err error) {
	rep, err := Verify(bytes.NewReader(data))
	if err != nil {
		return Cut{}, false, err
	}
	if rep.Intact() {
		return Cut{}, false, nil
	}
	start := bytes.LastIndexByte(data, '\n') + 1
	if len(data) == 0 || data[len(data)-1] == '\n' || rep.FirstBad != rep.Lines {
		return Cut{}, false, &DamageError{Line: rep.FirstBad, Problem: rep.Problem}
	}
	line := data[start:]
	// What the Writer wrote of the record's start must fit the chain:
	// its seq follows, its prev is the hash of the last whole line. A
	// line that says otherwise is not a cut record of this log.
	before, err := Verify(bytes.NewReader(data[:start]))
	if err != nil {
		return Cut{}, false, err
	}
	if m := cutHeader().FindSubmatch(line); m != nil {
		if string(m[1]) != strconv.Itoa(before.Records+1) || (m[2] != nil && string(m[2]) != before.Head && before.Records > 0) {
			return Cut{}, false, &DamageError{Line: rep.FirstBad,
				Problem: fmt.Sprintf("an incomplete last line whose seq or prev does not follow line %d", rep.FirstBad-1)}
		}
	}
	head := line[:min(len(line), 80)]
	return Cut{Offset: int64(start), Size: len(line), Head: clean(string(head))}, true, nil
}

// DamageError is a log broken otherwise than by a cut last line.
type DamageError struct {
	Line    int
	Problem string
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("line %d: %s: the log is damaged otherwise than by a cut last record, so nothing is dropped (see rein audit verify)", e.Line, e.Problem)
}

// Repaired is what Repair did.
type Repaired struct {
	Cut  Cut
	Copy string // the whole log as it was, before the cut line was dropped
}

// Repair drops the cut last line of the log at path, and nothing else: it
// refuses a log with any other damage (a *DamageError) and does nothing to
// an intact one (ok false). Before it drops anything it copies the whole log
// to path.cut-TIME (mode 0600, fsynced); then it truncates the log to its
// last whole line and fsyncs it. It holds the session's lock meanwhile, so
// it refuses (ErrBusy) while the session runs or is being resumed.
//
// What the dropped record said is lost to the log (the copy keeps its
// bytes). A cut intent means the tool never ran (the intent is written
// before it); a cut result means it ran and its outcome is unknown, so
// rein resume settles it as an unfinished call.
func Repair(path string, now time.Time) (r Repaired, ok bool, err error) {
	lk, err := lock(path, sessionOfPath(path), "repair")
	if err != nil {
		return Repaired{}, false, err
	}
	defer func() { err = errors.Join(err, unlock(lk)) }()
	data, err := os.ReadFile(path)
	if err != nil {
		return Repaired{}, false, fmt.Errorf("audit log: %w", err)
	}
	cut, ok, err := FindCut(data)
	if err != nil || !ok {
		return Repaired{}, false, err
	}
	r.Cut = cut
	r.Copy = fmt.Sprintf("%s.cut-%s", path, now.UTC().Format("20060102T150405.000000000Z"))
	if err := writeNew(r.Copy, data); err != nil {
		return Repaired{}, false, fmt.Errorf("audit log: keep a copy before repairing: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return Repaired{}, false, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(cut.Offset); err != nil {
		return Repaired{}, false, fmt.Errorf("audit log: drop the cut record: %w", err)
	}
	if err := f.Sync(); err != nil {
		return Repaired{}, false, fmt.Errorf("audit log: drop the cut record: %w", err)
	}
	return r, true, f.Close()
}

// writeNew writes data to a file that must not exist yet, and syncs it.
func writeNew(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
