package sandbox

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// CapWriter keeps the first and the last bytes written to it, at most max in
// all, and counts every byte. Memory stays bounded however much is written.
// Every backend captures a command's output with it, so the model sees the
// same "[… N bytes cut …]" marker whichever sandbox ran the command.
// It is not safe for concurrent use: one goroutine writes, and reads happen
// after that goroutine is done.
type CapWriter struct {
	headMax, tailMax int
	head             []byte
	tail             []byte // a ring once len(tail) == tailMax; pos is its oldest byte
	pos              int
	n                int64
}

// NewCapWriter returns a writer that keeps at most max bytes (half head,
// half tail); 0 or less means DefaultMaxOutput.
func NewCapWriter(max int) *CapWriter {
	if max <= 0 {
		max = DefaultMaxOutput
	}
	return &CapWriter{headMax: max / 2, tailMax: max - max/2}
}

// Write never fails.
func (w *CapWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	written := len(p)
	if room := w.headMax - len(w.head); room > 0 {
		k := min(room, len(p))
		if w.head == nil {
			w.head = make([]byte, 0, w.headMax)
		}
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 {
		w.writeTail(p)
	}
	return written, nil
}

func (w *CapWriter) writeTail(p []byte) {
	if w.tailMax == 0 {
		return
	}
	if w.tail == nil {
		w.tail = make([]byte, 0, w.tailMax)
	}
	if len(p) >= w.tailMax {
		w.tail = append(w.tail[:0], p[len(p)-w.tailMax:]...)
		w.pos = 0
		return
	}
	if room := w.tailMax - len(w.tail); room > 0 { // still filling; pos stays 0
		if len(p) <= room {
			w.tail = append(w.tail, p...)
			return
		}
		w.tail = append(w.tail, p[:room]...)
		p = p[room:]
	}
	k := copy(w.tail[w.pos:], p)
	copy(w.tail, p[k:])
	w.pos = (w.pos + len(p)) % w.tailMax
}

// Len returns how many bytes were written in all.
func (w *CapWriter) Len() int64 { return w.n }

// kept returns the head and the tail in order, without a marker.
func (w *CapWriter) kept() (head, tail []byte) {
	if len(w.tail) < w.tailMax || w.pos == 0 {
		return w.head, w.tail
	}
	t := make([]byte, 0, len(w.tail))
	t = append(t, w.tail[w.pos:]...)
	return w.head, append(t, w.tail[:w.pos]...)
}

// String returns everything written when it fit, else the head, a line
// "[… N bytes cut …]" and the tail. A character split by a cut is dropped
// whole (and counted as cut) so that UTF-8 text stays valid.
func (w *CapWriter) String() string {
	head, tail := w.kept()
	var b strings.Builder
	if w.n <= int64(len(head)+len(tail)) {
		b.Grow(len(head) + len(tail))
		b.Write(head)
		b.Write(tail)
		return b.String()
	}
	h, t := trimHead(head), trimTail(tail)
	cut := w.n - int64(len(h)+len(t))
	b.Grow(len(h) + len(t) + 40)
	b.Write(h)
	fmt.Fprintf(&b, "\n[… %d bytes cut …]\n", cut)
	b.Write(t)
	return b.String()
}

// trimHead drops an incomplete UTF-8 sequence from the end of b.
func trimHead(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// trimTail drops continuation bytes from the start of b (at most three:
// more is not UTF-8 text, and is kept as it is).
func trimTail(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	if len(b) < utf8.UTFMax {
		return b[len(b):] // nothing but the end of a split character
	}
	return b
}
