package sandbox

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestRunRequestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, req := range []runRequest{
		{dir: "/w", path: "/bin/sh", argv: []string{"/bin/sh", "-c", "true"}, env: []string{}},
		{dir: "/w", path: "/usr/bin/ls", argv: []string{"ls", "-la"}, env: []string{}},
		{dir: "/w/sub dir", path: "/bin/bash", argv: []string{"/bin/bash", "-c", "printf '\xff\xfe not UTF-8'\n\x00after NUL"}, env: []string{"A=1", "EMPTY=", "é=ü"}},
		{dir: "/", path: "/x", argv: []string{"/x"}, env: []string{strings.Repeat("K", 200<<10) + "=big"}},
	} {
		got, err := decodeRunRequest(req.encode())
		if err != nil {
			t.Fatalf("decode(encode(%.60q)): %v", req.argv, err)
		}
		if !reflect.DeepEqual(got, req) {
			t.Errorf("round trip changed the request:\n%+.80v\n%+.80v", req, got)
		}
	}
}

func TestDecodeRunRequestRefuses(t *testing.T) {
	t.Parallel()
	good := runRequest{dir: "/w", path: "/bin/sh", argv: []string{"/bin/sh", "-c", "true"}, env: []string{"A=1"}}.encode()
	for _, c := range []struct {
		name string
		body []byte
		want string
	}{
		{"empty", nil, "malformed"},
		{"cut short", good[:len(good)-1], "malformed"},
		{"trailing bytes", append(bytes.Clone(good), 0), "malformed"},
		{"huge count", []byte{1, '/', 0xff, 0xff, 0xff, 0xff, 0x0f}, "malformed"},
		{"no program", runRequest{dir: "/w", argv: []string{"sh"}, env: []string{}}.encode(), "program"},
		{"no argv", runRequest{dir: "/w", path: "/bin/sh"}.encode(), "argv"},
		{"relative dir", runRequest{dir: "w", path: "/bin/sh", argv: []string{"/bin/sh"}}.encode(), "directory"},
	} {
		if _, err := decodeRunRequest(c.body); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// Frames come out whole and in order however the stream is cut.
func TestFrameBufCuts(t *testing.T) {
	t.Parallel()
	var stream []byte
	want := []frame{
		{frameRun, 1, runRequest{dir: "/w", path: "/bin/sh", argv: []string{"/bin/sh"}}.encode()},
		{frameSignal, 1, uint32Body(15)},
		{frameReady, 0, []byte{}},
		{frameDone, 1 << 40, uint32Body(0x0900)},
	}
	for _, f := range want {
		stream = appendFrame(stream, f.typ, f.id, f.body)
	}
	for step := 1; step <= len(stream); step++ {
		var fb frameBuf
		var got []frame
		for i := 0; i < len(stream); i += step {
			fb.buf = append(fb.buf, stream[i:min(i+step, len(stream))]...)
			for {
				f, ok, err := fb.next()
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if !ok {
					break
				}
				f.body = bytes.Clone(f.body)
				got = append(got, f)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: frames\n%v\nwant\n%v", step, got, want)
		}
	}
}

func TestFrameBufRefusesBadLengths(t *testing.T) {
	t.Parallel()
	for _, b := range [][]byte{
		{0, 0, 0, 0},             // shorter than type and id
		{8, 0, 0, 0},             // still shorter
		{0xff, 0xff, 0xff, 0x7f}, // beyond frameMax
	} {
		fb := frameBuf{buf: b}
		if _, _, err := fb.next(); err == nil {
			t.Errorf("length % x accepted", b)
		}
	}
}

// FuzzDecodeRunRequest: any body is refused or decodes to a request whose
// encoding decodes to it again.
func FuzzDecodeRunRequest(f *testing.F) {
	f.Add(runRequest{dir: "/w", path: "/bin/sh", argv: []string{"/bin/sh", "-c", "true"}, env: []string{"A=1"}}.encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := decodeRunRequest(b)
		if err != nil {
			return
		}
		again, err := decodeRunRequest(req.encode())
		if err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("%+v: round trip %v %+v", req, err, again)
		}
	})
}
