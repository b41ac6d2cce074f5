package docker

import (
	"bytes"
	"io"
	"strconv"
)

// frame takes the wrapper's stderr apart: a header line "NONCE PID\n" the
// wrapper writes before the script starts, the script's own stderr, passed
// on to out, and a trailer "\nNONCE STATUS\n" the wrapper writes after the
// script's shell has exited. The nonce is random for each call; a script can
// read it in /proc and forge a trailer, which lets it lie only about its own
// exit status.
//
// frame is written by one goroutine; pid is handed over on a channel, and
// the status is read once writing is done.
type frame struct {
	header  []byte // "NONCE "
	trailer []byte // "\nNONCE "
	out     io.Writer
	pidc    chan<- int // gets the pid once; may be nil

	state   int
	pending []byte // a header so far, a possible start of the trailer, or the status digits so far

	status    int
	hasStatus bool
}

const (
	inHeader = iota
	inBody
	inStatus
	inRest
)

// maxNumber bounds a pid or status in digits.
const maxNumber = 10

func newFrame(nonce string, out io.Writer, pidc chan<- int) *frame {
	return &frame{
		header:  []byte(nonce + " "),
		trailer: []byte("\n" + nonce + " "),
		out:     out,
		pidc:    pidc,
	}
}

// Write never fails.
func (f *frame) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		switch f.state {
		case inHeader:
			p = f.readHeader(p)
		case inBody:
			p = f.readBody(p)
		case inStatus:
			p = f.readStatus(p)
		default:
			_, _ = f.out.Write(p)
			p = nil
		}
	}
	return n, nil
}

// readHeader collects the first line. Anything that is not a header (the
// client's own error message when the wrapper never ran) is body.
func (f *frame) readHeader(p []byte) []byte {
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		f.pending = append(f.pending, p...)
		if !f.headerSoFar() {
			return f.toBody()
		}
		return nil
	}
	f.pending = append(f.pending, p[:i]...)
	rest := p[i+1:]
	if pid, ok := f.number(f.pending, f.header); ok && pid > 0 {
		f.pending = f.pending[:0]
		f.state = inBody
		if f.pidc != nil {
			f.pidc <- pid
		}
		return rest
	}
	f.pending = append(f.pending, '\n')
	return append(f.toBody(), rest...)
}

// headerSoFar reports whether pending may still become a header.
func (f *frame) headerSoFar() bool {
	h := f.pending
	if len(h) <= len(f.header) {
		return bytes.HasPrefix(f.header, h)
	}
	digits := h[len(f.header):]
	return bytes.HasPrefix(h, f.header) && len(digits) <= maxNumber && allDigits(digits)
}

// toBody gives up on a header: what was held back is body.
func (f *frame) toBody() []byte {
	held := f.pending
	f.pending = nil
	f.state = inBody
	return held
}

// readBody passes p on up to the trailer, holding back a tail of p that may
// be the trailer's start.
func (f *frame) readBody(p []byte) []byte {
	if len(f.pending) > 0 {
		// pending is a proper prefix of the trailer, whose only '\n' is its
		// first byte: the trailer can start nowhere else in pending.
		need := len(f.trailer) - len(f.pending)
		k := min(need, len(p))
		if !bytes.Equal(p[:k], f.trailer[len(f.pending):len(f.pending)+k]) {
			_, _ = f.out.Write(f.pending)
			f.pending = f.pending[:0]
			return p
		}
		f.pending = append(f.pending, p[:k]...)
		if k < need {
			return nil
		}
		f.pending = f.pending[:0]
		f.state = inStatus
		return p[k:]
	}
	if i := bytes.Index(p, f.trailer); i >= 0 {
		_, _ = f.out.Write(p[:i])
		f.state = inStatus
		return p[i+len(f.trailer):]
	}
	keep := f.partialTrailer(p)
	_, _ = f.out.Write(p[:len(p)-keep])
	f.pending = append(f.pending, p[len(p)-keep:]...)
	return nil
}

// partialTrailer returns the length of the longest suffix of p that is a
// proper prefix of the trailer.
func (f *frame) partialTrailer(p []byte) int {
	i := bytes.LastIndexByte(p[max(0, len(p)-len(f.trailer)+1):], '\n')
	if i < 0 {
		return 0
	}
	suffix := p[max(0, len(p)-len(f.trailer)+1)+i:]
	if bytes.HasPrefix(f.trailer, suffix) {
		return len(suffix)
	}
	return 0
}

// readStatus collects the status digits up to the trailer's '\n'. A
// malformed trailer is body after all.
func (f *frame) readStatus(p []byte) []byte {
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		i = len(p)
	}
	f.pending = append(f.pending, p[:i]...)
	if len(f.pending) > maxNumber || !allDigits(f.pending) {
		return f.notTrailer(p[i:])
	}
	if i == len(p) {
		return nil
	}
	if len(f.pending) == 0 {
		return f.notTrailer(p[i:])
	}
	f.status, _ = strconv.Atoi(string(f.pending))
	f.hasStatus = true
	f.pending = f.pending[:0]
	f.state = inRest
	return p[i+1:]
}

// notTrailer passes on what looked like a trailer as body and goes on
// with rest. What was held back holds no '\n' but the first, where a real
// trailer would have had a status, so no trailer can start inside it.
func (f *frame) notTrailer(rest []byte) []byte {
	_, _ = f.out.Write(f.trailer[:1])
	held := append(append([]byte{}, f.trailer[1:]...), f.pending...)
	f.pending = f.pending[:0]
	f.state = inBody
	_, _ = f.out.Write(held)
	return rest
}

// Close passes on whatever is still held back. Call it once writing is
// done.
func (f *frame) Close() error {
	switch f.state {
	case inHeader, inBody:
		_, _ = f.out.Write(f.pending)
	case inStatus:
		_, _ = f.out.Write(f.trailer)
		_, _ = f.out.Write(f.pending)
	}
	f.pending = nil
	f.state = inRest
	return nil
}

// number parses "prefix DIGITS" in line.
func (f *frame) number(line, prefix []byte) (int, bool) {
	d, ok := bytes.CutPrefix(line, prefix)
	if !ok || len(d) == 0 || len(d) > maxNumber || !allDigits(d) {
		return 0, false
	}
	n, err := strconv.Atoi(string(d))
	return n, err == nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
