// Package audit writes the append-only record of a session: one JSON object
// per line, one line per event, each written out before the call that
// records it returns. An intent record is written before a tool runs, so no
// effect happens unrecorded.
//
// Each record carries the SHA-256 of the line before it (the first anchors
// the chain with the session id), so an edited, deleted or reordered line
// breaks the chain. A Writer never drops a record: when a write fails, the
// Writer stays failed and every later Write returns the error, so the caller
// stops instead of acting unrecorded.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/reinhq/rein/agent/stop"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/internal/statedir"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/session"
)

// Type is the kind of event a record describes.
type Type string

// The record types.
const (
	SessionStart Type = "session_start"
	ModelCall    Type = "model_call"
	Verdict      Type = "verdict"
	Intent       Type = "intent"
	Result       Type = "result"
	Abort        Type = "abort"  // the session was told to stop: reason, and the call in flight if any
	Resume       Type = "resume" // an interrupted session goes on: how its unfinished calls were settled
	Stop         Type = "stop"
)

// Record is one line of the audit log. Seq, Time, Session and Prev are set
// by the Writer; the rest depends on Type.
type Record struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Session string    `json:"session"`
	Type    Type      `json:"type"`
	Prev    string    `json:"prev"`

	Step   int             `json:"step,omitempty"`
	CallID string          `json:"call_id,omitempty"`
	Tool   string          `json:"tool,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`

	// intent (and its result): the idempotency key of a side-effecting
	// call, the tool's effect class, and the rollback snapshots taken of
	// the files it may change, before it ran.
	Key       string   `json:"key,omitempty"`
	Effect    Effect   `json:"effect,omitzero"`
	Snapshots []string `json:"snapshots,omitempty"`

	// verdict (a refusal's Content is what the model was told)
	Decision Decision `json:"decision,omitzero"`
	Gate     string   `json:"gate,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	// Approval is the human's answer that decided the call, when one did:
	// its scope (once, session, always), the pattern it covers and who
	// gave it ("terminal", or "rule:session" for a sticky answer given
	// earlier) (gate.Verdict.Answer).
	Approval *approve.Answer `json:"approval,omitempty"`

	// model_call
	Usage     *model.Usage `json:"usage,omitempty"`
	Tokens    int64        `json:"tokens,omitempty"` // cumulative, this session
	Text      string       `json:"text,omitempty"`
	Calls     []string     `json:"calls,omitempty"`
	ModelStop string       `json:"model_stop,omitempty"`

	// result
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	Bytes     int    `json:"bytes,omitempty"`
	SHA256    string `json:"sha256,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// Refused marks a result that is rein's words: the tool did not run.
	Refused bool `json:"refused,omitempty"`
	// Source is where the result came from, as its tool said (a web page
	// and its URL); none for a local result.
	Source model.Source `json:"source,omitzero"`

	DurationMS float64 `json:"duration_ms,omitempty"`

	// stop
	Stop      stop.Reason `json:"stop,omitempty"`
	Answer    string      `json:"answer,omitempty"`
	Steps     int         `json:"steps,omitempty"`
	ToolCalls int         `json:"tool_calls,omitempty"`
	Error     string      `json:"error,omitempty"`

	// egress: the connection (Decision, Reason and DurationMS too)
	Conn *EgressConn `json:"conn,omitempty"`

	// session_start
	Task   string          `json:"task,omitempty"`
	Config json.RawMessage `json:"config,omitempty"`
}

// pageSize is the unit in which the kernel copies a write into a file; a
// fatal signal can stop a write between two of them.
const pageSize = 4096

// Padding reports whether a line of the log is padding (only spaces): it
// holds no record, is not part of the hash chain, and readers skip it.
func Padding(line []byte) bool { return len(bytes.TrimLeft(line, " ")) == 0 }

// Durability says how far a record is pushed before Write returns.
type Durability uint8

const (
	// Flush hands every record to the operating system in one write: it
	// survives rein crashing or being killed.
	Flush Durability = iota
	// Fsync also waits for the disk before every effect: it survives the
	// machine losing power. Records are committed in groups: every record
	// is handed to the operating system in one write as it comes, and the
	// disk is waited for when a record must be durable before Write
	// returns — the intent of a call that has a side effect (it carries an
	// idempotency key), a stop — and on Sync and Close. A call's verdict
	// and intent thus share one fsync, before the call runs; its result
	// and the next model call ride with the next one. After a power loss
	// the log may lack records written after the last such point, never
	// an intent whose effect may have happened.
	Fsync
)

// durableNow reports whether r must be on disk before Write returns under
// Fsync: an intent of a side-effecting call (the loop gives exactly those
// an idempotency key) — the effect follows it — and a stop.
func durableNow(r *Record) bool {
	return r.Type == Stop || (r.Type == Intent && r.Key != "")
}

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("audit log is closed")

// Writer appends records to one session's log. It is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	out     io.Writer
	file    *os.File // nil when writing to a plain io.Writer
	path    string
	lock    *os.File // the session's lock (Create, Append), released by Close
	session string
	dur     Durability
	now     func() time.Time
	seq     uint64
	prev    string
	off     int64 // the file's size, for page alignment; -1 when unknown
	redact  func(string) string
	buf     []byte
	err     error // sticky: once a write fails, every later write fails
	dirty   bool  // written since the last fsync (Fsync durability)
	fsync   func() error
	observe []func(Record)
}

// Option configures a Writer.
type Option func(*Writer)

// WithDurability sets how far each record is pushed before Write returns.
func WithDurability(d Durability) Option { return func(w *Writer) { w.dur = d } }

// WithRedactor passes every text field of every record (task, text, args,
// reason, content, answer, error) through redact before it is written:
// secrets never reach the log.
func WithRedactor(redact func(string) string) Option { return func(w *Writer) { w.redact = redact } }

// WithClock sets the clock used for timestamps (tests).
func WithClock(now func() time.Time) Option { return func(w *Writer) { w.now = now } }

// WithObserver adds a function that sees every record after it is written,
// stamped as it appears in the log: a trace printer, an event stream. It
// runs under the Writer's lock, in order, and must not call the Writer.
func WithObserver(f func(Record)) Option {
	return func(w *Writer) { w.observe = append(w.observe, f) }
}

// NewWriter returns a Writer for session that writes to out.
func NewWriter(out io.Writer, sessionID string, opts ...Option) *Writer {
	w := &Writer{out: out, session: sessionID, now: time.Now, prev: Anchor(sessionID), off: -1}
	if f, ok := out.(*os.File); ok {
		w.file, w.fsync = f, f.Sync
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			w.off = st.Size()
		}
	}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Create creates dir (mode 0700) if needed and a new log file named
// SESSION.jsonl in it (mode 0600). It refuses to reuse an existing file.
// The Writer holds the session's lock (LockName) until Close, so that no
// rein resume can append to a session that is still running.
func Create(dir, sessionID string, opts ...Option) (*Writer, error) {
	if err := session.CheckID(sessionID); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit log: create directory: %w", err)
	}
	path := FileName(dir, sessionID)
	lk, err := lock(path, sessionID, lockRun)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("audit log: %w", err), unlock(lk))
	}
	w := NewWriter(f, sessionID, opts...)
	w.path, w.lock = path, lk
	return w, nil
}

// FileName is the path of a session's log in dir.
func FileName(dir, sessionID string) string { return filepath.Join(dir, sessionID+".jsonl") }

// Anchor is the Prev of a session's first record: the SHA-256 of
// "rein-audit-v1\n" followed by the session id.
func Anchor(sessionID string) string {
	sum := sha256.Sum256([]byte("rein-audit-v1\n" + sessionID))
	return hex.EncodeToString(sum[:])
}

// Path returns the file's path, or "" when the Writer writes to a stream.
func (w *Writer) Path() string { return w.path }

// Session returns the session id.
func (w *Writer) Session() string { return w.session }

// Write stamps r with the next sequence number, the time, the session id and
// the hash of the previous line, and writes it as one line.
func (w *Writer) Write(r Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.seq++
	r.Seq = w.seq
	r.Time = w.now().UTC()
	r.Session = w.session
	r.Prev = w.prev
	if w.redact != nil {
		r = redactRecord(r, w.redact)
	}
	line, err := json.Marshal(r)
	if err != nil {
		w.err = fmt.Errorf("audit log: encode record %d: %w", r.Seq, err)
		return w.err
	}
	sum := sha256.Sum256(line)
	w.buf = w.buf[:0]
	if w.off >= 0 {
		// A SIGKILL can cut a write between two pages of the file, never
		// inside one. A line that would straddle a page boundary is moved
		// to the next page by a line of spaces, which readers skip: a
		// record shorter than a page is then written whole or not at all.
		n := int64(len(line) + 1)
		if rem := pageSize - w.off%pageSize; n <= pageSize && n > rem {
			w.buf = append(w.buf, bytes.Repeat([]byte{' '}, int(rem-1))...)
			w.buf = append(w.buf, '\n')
		}
	}
	w.buf = append(append(w.buf, line...), '\n')
	if _, err := w.out.Write(w.buf); err != nil {
		w.err = fmt.Errorf("audit log: write record %d: %w", r.Seq, err)
		return w.err
	}
	if w.off >= 0 {
		w.off += int64(len(w.buf))
	}
	w.dirty = true
	if w.dur == Fsync && durableNow(&r) {
		if err := w.sync(); err != nil {
			w.err = fmt.Errorf("audit log: sync record %d: %w", r.Seq, err)
			return w.err
		}
	}
	w.prev = hex.EncodeToString(sum[:])
	for _, f := range w.observe {
		f(r)
	}
	return nil
}

// sync waits for the disk when records were written since the last time
// (Fsync durability, a file). The caller holds w.mu.
func (w *Writer) sync() error {
	if w.dur != Fsync || w.file == nil || !w.dirty {
		return nil
	}
	if err := w.fsync(); err != nil {
		return err
	}
	w.dirty = false
	return nil
}

// Sync makes every record written so far durable (Fsync durability; with
// Flush it does nothing more than Write did). A failure is sticky, as a
// failed Write is.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.sync(); err != nil {
		w.err = fmt.Errorf("audit log: sync: %w", err)
		return w.err
	}
	return nil
}

// Close makes the records written so far durable (Fsync durability),
// closes the underlying file, if the Writer opened one, and then releases
// the session's lock.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if w.err == nil {
		if serr := w.sync(); serr != nil {
			err = fmt.Errorf("audit log: sync on close: %w", serr)
		}
		w.err = ErrClosed
	}
	if w.file != nil && w.path != "" {
		f := w.file
		w.file = nil
		err = errors.Join(err, f.Close())
	}
	lk := w.lock
	w.lock = nil
	return errors.Join(err, unlock(lk))
}

// DefaultDir is where audit logs go: $XDG_STATE_HOME/rein/audit, or
// ~/.local/state/rein/audit when XDG_STATE_HOME is unset (never in a test
// binary: see statedir.Root).
func DefaultDir() (string, error) {
	root, err := statedir.Root()
	if err != nil {
		return "", fmt.Errorf("audit log: %w; or pass --audit-dir", err)
	}
	return filepath.Join(root, "audit"), nil
}

// ClipText returns rec with the model's text (a model_call record's Text)
// or the answer (a stop record's Answer) clipped to max bytes like a tool
// result, with the full size and SHA-256 so the original can be proven.
// Empty text leaves rec as it is.
func ClipText(rec Record, max int, text string) Record {
	if text == "" {
		return rec
	}
	clipped, size, sum, cut := Clip(text, max)
	if rec.Type == Stop {
		rec.Answer = clipped
	} else {
		rec.Text = clipped
	}
	rec.Bytes, rec.SHA256, rec.Truncated = size, sum, cut
	return rec
}

// Clip shortens s to at most max bytes (on a rune boundary) for a record,
// and returns the full size and SHA-256 so the original can be proven.
func Clip(s string, max int) (clipped string, size int, sum string, truncated bool) {
	h := sha256.Sum256([]byte(s))
	sum = hex.EncodeToString(h[:])
	if len(s) <= max {
		return s, len(s), sum, false
	}
	cut := max
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], len(s), sum, true
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func redactRecord(r Record, redact func(string) string) Record {
	r.Task, r.Text, r.Reason = redact(r.Task), redact(r.Text), redact(r.Reason)
	r.Content, r.Answer, r.Error = redact(r.Content), redact(r.Answer), redact(r.Error)
	r.Source.Location = redact(r.Source.Location)
	if r.Approval != nil {
		a := *r.Approval
		a.Pattern = redact(a.Pattern)
		r.Approval = &a
	}
	if r.Conn != nil {
		c := *r.Conn // a name can carry a secret out: "AKIA….evil.example"
		c.Host = redact(c.Host)
		r.Conn = &c
	}
	if len(r.Args) > 0 {
		if s := redact(string(r.Args)); s != string(r.Args) {
			if json.Valid([]byte(s)) {
				r.Args = json.RawMessage(s)
			} else {
				b, _ := json.Marshal(s)
				r.Args = b
			}
		}
	}
	if len(r.Config) > 0 {
		if s := redact(string(r.Config)); s != string(r.Config) && json.Valid([]byte(s)) {
			r.Config = json.RawMessage(s)
		}
	}
	return r
}
