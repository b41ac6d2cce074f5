// Package wire notes what a model server actually sent, so a provider can
// tell "the server could not be reached" from "the server answered, with
// something that is not the API's JSON", and say which.
//
// A Sniffer wraps each HTTP response of one call (from an SDK middleware):
// it keeps the status, the content type, the size read and the first bytes
// of the body as the SDK reads it. It does not read the body itself, change
// it or keep more than Head bytes.
package wire

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Head is how many bytes of a body a Sniffer keeps.
const Head = 200

// Sniffer records the last response of one call. The zero value is ready.
// It is safe for concurrent use; the SDKs' attempts are sequential, and the
// last one is what the call's error is about.
type Sniffer struct {
	mu      sync.Mutex
	got     bool
	status  int
	ctype   string
	head    []byte
	n       int64
	readErr error
}

// Wrap records res and makes its body note what is read from it. It
// returns res for chaining; a nil res (a transport error) is recorded as
// no answer.
func (s *Sniffer) Wrap(res *http.Response) *http.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got, s.head, s.n, s.readErr = res != nil, nil, 0, nil
	if res == nil {
		return nil
	}
	s.status, s.ctype = res.StatusCode, res.Header.Get("Content-Type")
	if res.Body != nil {
		res.Body = &body{rc: res.Body, s: s}
	}
	return res
}

// Answered reports whether the last attempt got an HTTP response.
func (s *Sniffer) Answered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

// Status is the last response's HTTP status (0 without one).
func (s *Sniffer) Status() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.got {
		return 0
	}
	return s.status
}

// Cut reports whether reading the last body failed before its end (the
// server closed the connection mid-answer, say).
func (s *Sniffer) Cut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got && s.readErr != nil
}

// Describe says what the last response was, for an error message: status,
// content type, how much was read, and the first bytes of the body with
// every control or invisible character replaced, quoted. It is "" when no
// response came.
func (s *Sniffer) Describe() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.got {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", s.status, http.StatusText(s.status))
	ct := Sanitize(s.ctype)
	if ct == "" {
		ct = "no content type"
	}
	fmt.Fprintf(&b, ", %s", ct)
	switch {
	case s.readErr != nil:
		fmt.Fprintf(&b, ", cut after %d bytes (%s)", s.n, Sanitize(s.readErr.Error()))
	default:
		fmt.Fprintf(&b, ", %d bytes", s.n)
	}
	if len(s.head) == 0 {
		b.WriteString(", empty body")
		return b.String()
	}
	more := ""
	if s.n > int64(len(s.head)) {
		more = "…"
	}
	fmt.Fprintf(&b, `: "%s"%s`, Sanitize(string(s.head)), more)
	return b.String()
}

// Sanitize makes s safe to print on a terminal in one line: every control,
// format (bidi, zero-width) or invalid byte becomes '?', a line break or a
// tab a space, and a double quote a single one.
func Sanitize(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteByte('?')
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r == '"':
			b.WriteByte('\'')
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || !unicode.IsPrint(r) && r != ' ':
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

type body struct {
	rc io.ReadCloser
	s  *Sniffer
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.s.mu.Lock()
	if room := Head - len(b.s.head); room > 0 && n > 0 {
		b.s.head = append(b.s.head, p[:min(n, room)]...)
	}
	b.s.n += int64(n)
	if err != nil && err != io.EOF && b.s.readErr == nil {
		b.s.readErr = err
	}
	b.s.mu.Unlock()
	return n, err
}

func (b *body) Close() error { return b.rc.Close() }
