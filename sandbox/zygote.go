package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The zygote protocol: rein and its landlock zygote talk over a unix stream
// socketpair in frames of
//
//	length uint32 (little-endian, of what follows) | type byte | id uint64 | body
//
// A run frame also carries the command's stdin, stdout and stderr and the
// write end of its status pipe as SCM_RIGHTS descriptors, sent with its
// first byte; the zygote takes them from the queue of descriptors it has
// received, four per run frame, in order. The zygote answers a run frame
// on that status pipe, not on the socket: started (or failed), then done,
// then it closes the pipe; so rein reads each command's answers where it
// waits for them, and a zygote that dies shows as the end of the pipe.
// Strings are raw bytes (a script need not be UTF-8).
type frameType byte

// Frame types. rein sends run and signal; the zygote sends ready on the
// socket, the others on a command's status pipe.
const (
	frameRun     frameType = 'R' // run a command: body runRequest, four descriptors
	frameSignal  frameType = 'K' // signal a command's process group: body uint32 signal
	frameReady   frameType = 'Y' // the zygote serves (id 0)
	frameStarted frameType = 'S' // the command runs: body uint32 pid
	frameFailed  frameType = 'F' // the command did not start: body a message
	frameNoExec  frameType = 'X' // the confined child could not exec the program (nothing of it ran): body a message
	frameDone    frameType = 'D' // the command ended and was reaped: body uint32 wait status
)

const (
	frameHeader = 4 + 1 + 8
	// frameMax bounds a frame's length: far above any script the kernel
	// would take as an argument (128 KiB), far below what could hurt.
	frameMax = 16 << 20
	// runFDs is how many descriptors a run frame carries: stdin, stdout,
	// stderr and the status pipe.
	runFDs = 4
)

// frame is one decoded frame.
type frame struct {
	typ  frameType
	id   uint64
	body []byte
}

// appendFrame appends the encoding of a frame to dst.
func appendFrame(dst []byte, typ frameType, id uint64, body []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(1+8+len(body)))
	dst = append(dst, byte(typ))
	dst = binary.LittleEndian.AppendUint64(dst, id)
	return append(dst, body...)
}

// frameBuf collects bytes read from the socket and cuts them into frames.
type frameBuf struct {
	buf []byte
}

// next returns the next complete frame, or ok false when more bytes are
// needed. Appending to buf never overwrites a body next returned.
func (b *frameBuf) next() (f frame, ok bool, err error) {
	if len(b.buf) < 4 {
		return f, false, nil
	}
	n := binary.LittleEndian.Uint32(b.buf)
	if n < 1+8 || n > frameMax {
		return f, false, fmt.Errorf("zygote protocol: frame length %d", n)
	}
	if uint64(len(b.buf)) < 4+uint64(n) {
		return f, false, nil
	}
	f = frame{
		typ:  frameType(b.buf[4]),
		id:   binary.LittleEndian.Uint64(b.buf[5:]),
		body: b.buf[frameHeader : 4+n],
	}
	b.buf = b.buf[4+n:]
	return f, true, nil
}

// runRequest is the body of a run frame.
type runRequest struct {
	dir  string
	path string   // the program's path: absolute, or relative to dir as a direct command wrote it
	argv []string // argv[0]: the path, or a direct command's name as written
	env  []string
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ss)))
	for _, s := range ss {
		dst = appendString(dst, s)
	}
	return dst
}

func (r runRequest) encode() []byte {
	b := appendString(nil, r.dir)
	b = appendString(b, r.path)
	b = appendStrings(b, r.argv)
	return appendStrings(b, r.env)
}

var errShortBody = errors.New("zygote protocol: short or malformed run request")

// bodyReader decodes what runRequest.encode wrote.
type bodyReader struct {
	b   []byte
	err error
}

func (r *bodyReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShortBody
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *bodyReader) string() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errShortBody
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *bodyReader) strings() []string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) { // each string takes at least a byte
		r.err = errShortBody
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.string()
	}
	return ss
}

// decodeRunRequest is the inverse of runRequest.encode. It refuses a
// request without a program path or argv, or whose directory is not
// absolute (the path may be relative to it: a direct command's, as
// written).
func decodeRunRequest(b []byte) (runRequest, error) {
	r := &bodyReader{b: b}
	req := runRequest{dir: r.string(), path: r.string(), argv: r.strings(), env: r.strings()}
	switch {
	case r.err != nil:
		return req, r.err
	case len(r.b) != 0:
		return req, errShortBody
	case len(req.path) == 0:
		return req, errors.New("zygote protocol: no program path")
	case len(req.argv) == 0:
		return req, errors.New("zygote protocol: no argv")
	case len(req.dir) == 0 || req.dir[0] != '/':
		return req, errors.New("zygote protocol: the directory is not absolute")
	}
	return req, nil
}

// uint32Body encodes v as a frame body.
func uint32Body(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// bodyUint32 decodes a body made by uint32Body.
func bodyUint32(b []byte) (uint32, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("zygote protocol: body of %d bytes, want 4", len(b))
	}
	return binary.LittleEndian.Uint32(b), nil
}
