package wire

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain <html> ok", "plain <html> ok"},
		{"a\nb\tc\rd", "a b c d"},
		{"\x1b[2J\x00\x07", "?[2J??"},
		{"bidi \u202e evil \u200b", "bidi ? evil ?"},
		{"bad \xff\xfe utf8", "bad ?? utf8"},
		{`say "hi"`, "say 'hi'"},
		{"naïve ✓", "naïve ✓"},
	} {
		if got := Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

type failAfter struct {
	r   io.Reader
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	var s Sniffer
	if s.Answered() || s.Describe() != "" {
		t.Fatal("a fresh sniffer has an answer")
	}
	big := strings.Repeat("<p>", 300)
	res := s.Wrap(&http.Response{StatusCode: 502, Header: http.Header{"Content-Type": {"text/html"}}, Body: io.NopCloser(strings.NewReader(big))})
	if _, err := io.ReadAll(res.Body); err != nil {
		t.Fatal(err)
	}
	d := s.Describe()
	if !strings.HasPrefix(d, `502 Bad Gateway, text/html, 900 bytes: "<p><p>`) || !strings.HasSuffix(d, `"…`) || strings.Count(d, "<p>") > Head/3+1 {
		t.Errorf("Describe = %q", d)
	}
	// A later attempt replaces the first; a cut body says so.
	res = s.Wrap(&http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(&failAfter{bytes.NewReader([]byte(`{"a":`)), errors.New("unexpected EOF")})})
	_, _ = io.ReadAll(res.Body)
	if d := s.Describe(); !s.Cut() || d != `200 OK, no content type, cut after 5 bytes (unexpected EOF): "{'a':"` {
		t.Errorf("Describe = %q", d)
	}
	s.Wrap(nil)
	if s.Answered() || s.Status() != 0 {
		t.Error("a transport error left an answer")
	}
}
