package docker

import (
	"bytes"
	"fmt"
	"testing"
)

const testNonce = "0123abcd"

// feed writes chunks to a new frame and returns what it passed on, the pid
// it reported and the status it found.
func feed(chunks [][]byte) (out string, pid int, status int, ok bool) {
	var b bytes.Buffer
	pidc := make(chan int, 1)
	f := newFrame(testNonce, &b, pidc)
	for _, c := range chunks {
		if n, err := f.Write(c); n != len(c) || err != nil {
			panic(fmt.Sprintf("Write = %d, %v", n, err))
		}
	}
	_ = f.Close()
	select {
	case pid = <-pidc:
	default:
	}
	return b.String(), pid, f.status, f.hasStatus
}

// splits returns s written whole, byte by byte, and cut in two at every
// position.
func splits(s string) [][][]byte {
	out := [][][]byte{{[]byte(s)}}
	var bytewise [][]byte
	for i := range len(s) {
		bytewise = append(bytewise, []byte{s[i]})
	}
	out = append(out, bytewise)
	for i := 1; i < len(s); i++ {
		out = append(out, [][]byte{[]byte(s[:i]), []byte(s[i:])})
	}
	return out
}

func TestFrame(t *testing.T) {
	t.Parallel()
	const N = testNonce
	for _, c := range []struct {
		name      string
		in        string
		out       string
		pid       int
		status    int
		hasStatus bool
	}{
		{"normal", N + " 42\nerr text\n\n" + N + " 3\n", "err text\n", 42, 3, true},
		{"no stderr", N + " 7\n\n" + N + " 0\n", "", 7, 0, true},
		{"no final newline", N + " 7\nabc\n" + N + " 1\n", "abc", 7, 1, true},
		{"output after the trailer", N + " 7\nx\n" + N + " 0\nlate", "xlate", 7, 0, true},
		{"client error, no header", "OCI runtime exec failed: chdir\n", "OCI runtime exec failed: chdir\n", 0, 0, false},
		{"another nonce", "ffff0000 7\nx\nffff0000 1\n", "ffff0000 7\nx\nffff0000 1\n", 0, 0, false},
		{"header without newline", N + " 7", N + " 7", 0, 0, false},
		{"pid zero is no header", N + " 0\nx", N + " 0\nx", 0, 0, false},
		{"pid too long", N + " 12345678901\n", N + " 12345678901\n", 0, 0, false},
		{"nonce prefix in body", N + " 1\na\n0123x\n" + N + " 2\n", "a\n0123x", 1, 2, true},
		{"malformed status", N + " 1\na\n" + N + " zz\nmore\n" + N + " 5\n", "a\n" + N + " zz\nmore", 1, 5, true},
		{"empty status", N + " 1\na\n" + N + " \n\n" + N + " 5\n", "a\n" + N + " \n", 1, 5, true},
		{"status too long", N + " 1\n\n" + N + " 12345678901\n", "\n" + N + " 12345678901\n", 1, 0, false},
		{"killed before the trailer", N + " 1\npartial\n0123", "partial\n0123", 1, 0, false},
		{"killed in the trailer", N + " 1\npartial\n" + N + " 1", "partial\n" + N + " 1", 1, 0, false},
		{"newlines before the trailer", N + " 1\n\n\n\n" + N + " 4\n", "\n\n", 1, 4, true},
		{"empty", "", "", 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, chunks := range splits(c.in) {
				out, pid, status, ok := feed(chunks)
				if out != c.out || pid != c.pid || status != c.status || ok != c.hasStatus {
					t.Fatalf("in %d chunks %q:\ngot  out %q pid %d status %d,%v\nwant out %q pid %d status %d,%v",
						len(chunks), chunks, out, pid, status, ok, c.out, c.pid, c.status, c.hasStatus)
				}
			}
		})
	}
}

// FuzzFrame: how the stream is cut into writes never changes what frame
// finds; a well-formed stream whose body holds no trailer gives back the
// body, the pid and the status exactly.
func FuzzFrame(f *testing.F) {
	f.Add([]byte("err\n"), uint16(42), uint8(3), uint16(5), []byte(""))
	f.Add([]byte(""), uint16(1), uint8(0), uint16(0), []byte("late"))
	f.Add([]byte("\n\n0123abc\n0123abcd"), uint16(9), uint8(137), uint16(3), []byte("\n"))
	f.Add([]byte("a\n"+testNonce+" x\n"), uint16(7), uint8(1), uint16(11), []byte(testNonce+" 1\n"))
	f.Fuzz(func(t *testing.T, body []byte, pid uint16, status uint8, cut uint16, rest []byte) {
		stream := fmt.Sprintf("%s %d\n%s\n%s %d\n%s", testNonce, pid, body, testNonce, status, rest)
		whole, wpid, wst, wok := feed([][]byte{[]byte(stream)})
		i := int(cut) % (len(stream) + 1)
		for _, chunks := range [][][]byte{
			{[]byte(stream[:i]), []byte(stream[i:])},
			{[]byte(stream[:i/2]), []byte(stream[i/2 : i]), []byte(stream[i:])},
		} {
			out, p, st, ok := feed(chunks)
			if out != whole || p != wpid || st != wst || ok != wok {
				t.Fatalf("cut at %d: %q %d %d %v; whole: %q %d %d %v", i, out, p, st, ok, whole, wpid, wst, wok)
			}
		}
		if pid == 0 || bytes.Contains(append([]byte("\n"), body...), []byte("\n"+testNonce+" ")) {
			return // not a well-formed stream
		}
		if whole != string(body)+string(rest) || wpid != int(pid) || wst != int(status) || !wok {
			t.Fatalf("got %q pid %d status %d,%v; want %q pid %d status %d", whole, wpid, wst, wok, string(body)+string(rest), pid, status)
		}
	})
}

// FuzzFrameChunks: on any stream, headers or not, how it is cut into writes
// never changes what frame passes on, nor the pid and status it finds, and
// nothing is lost but a header and a trailer.
func FuzzFrameChunks(f *testing.F) {
	for _, s := range []string{
		testNonce + " 42\nerr\n\n" + testNonce + " 3\n",
		testNonce + " 1\na\n" + testNonce + " zz\n\n" + testNonce + " 5\nlate",
		"OCI runtime exec failed\n",
		testNonce + " 7",
		"\n" + testNonce + " 1\n",
	} {
		f.Add([]byte(s), uint16(3), uint16(9))
	}
	f.Fuzz(func(t *testing.T, data []byte, c1, c2 uint16) {
		whole, pid, st, ok := feed([][]byte{data})
		i, j := int(c1)%(len(data)+1), int(c2)%(len(data)+1)
		i, j = min(i, j), max(i, j)
		var bytewise [][]byte
		for k := range data {
			bytewise = append(bytewise, data[k:k+1])
		}
		for _, chunks := range [][][]byte{{data[:i], data[i:j], data[j:]}, bytewise} {
			out, p, s, o := feed(chunks)
			if out != whole || p != pid || s != st || o != ok {
				t.Fatalf("%q in %d chunks: %q %d %d %v; whole: %q %d %d %v", data, len(chunks), out, p, s, o, whole, pid, st, ok)
			}
		}
		if len(whole) > len(data) {
			t.Fatalf("frame passed on %d bytes of %d", len(whole), len(data))
		}
		lost := len(data) - len(whole)
		if pid == 0 && !ok && lost != 0 {
			t.Fatalf("no header, no trailer, yet %d bytes lost: %q -> %q", lost, data, whole)
		}
	})
}
