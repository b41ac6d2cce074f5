package sandbox

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCapWriter(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		max    int
		chunks []string
		want   string
	}{
		{"empty", 10, nil, ""},
		{"fits in head", 10, []string{"abc"}, "abc"},
		{"exactly max", 10, []string{"0123456789"}, "0123456789"},
		{"fits in pieces", 10, []string{"01", "234", "56789"}, "0123456789"},
		{"one byte over", 10, []string{"0123456789x"}, "01234\n[… 1 bytes cut …]\n6789x"},
		{"ring wraps", 10, []string{"01234", "abc", "def", "ghi", "jk"}, "01234\n[… 6 bytes cut …]\nghijk"},
		{"big single write", 10, []string{strings.Repeat("-", 5) + strings.Repeat("=", 100) + "TAIL!"}, "-----\n[… 100 bytes cut …]\nTAIL!"},
		{"odd max", 5, []string{"abcdefgh"}, "ab\n[… 3 bytes cut …]\nfgh"},
		{"max one", 1, []string{"abc"}, "\n[… 2 bytes cut …]\nc"},
		// "é" is 2 bytes, "漢" 3: a cut through a character drops it whole.
		{"utf8 head split", 6, []string{"ab漢xyz", "0123"}, "ab\n[… 7 bytes cut …]\n123"},
		{"utf8 tail split", 6, []string{"abc", "0123漢z"}, "abc\n[… 7 bytes cut …]\nz"},
		{"utf8 tail all continuation", 1, []string{"Ѳ"}, "\n[… 2 bytes cut …]\n"},
		{"utf8 whole kept", 8, []string{"ééxxxxxxxxéé"}, "éé\n[… 8 bytes cut …]\néé"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := NewCapWriter(c.max)
			var total int
			for _, ch := range c.chunks {
				n, err := w.Write([]byte(ch))
				if n != len(ch) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", ch, n, err, len(ch))
				}
				total += len(ch)
			}
			if got := w.String(); got != c.want {
				t.Errorf("String() = %q, want %q", got, c.want)
			}
			if w.Len() != int64(total) {
				t.Errorf("Len() = %d, want %d", w.Len(), total)
			}
		})
	}
}

func TestCapWriterDefault(t *testing.T) {
	t.Parallel()
	w := NewCapWriter(0)
	if got := w.headMax + w.tailMax; got != DefaultMaxOutput {
		t.Errorf("NewCapWriter(0) keeps %d bytes, want DefaultMaxOutput (%d)", got, DefaultMaxOutput)
	}
}

// FuzzCapWriter checks, for any data cut into any chunks, that the writer
// keeps exactly the data when it fits and otherwise exactly its head and
// tail, and that String keeps valid UTF-8 valid.
func FuzzCapWriter(f *testing.F) {
	f.Add([]byte("hello, world"), uint8(4), []byte{3, 1, 7})
	f.Add([]byte(strings.Repeat("ab漢😀", 40)), uint8(17), []byte{5})
	f.Add([]byte{}, uint8(0), []byte{})
	f.Add([]byte("x"), uint8(1), []byte{0})
	f.Fuzz(func(t *testing.T, data []byte, max uint8, cuts []byte) {
		limit := int(max) + 1
		w := NewCapWriter(limit)
		rest := data
		for i := 0; len(rest) > 0; i++ {
			k := len(rest)
			if len(cuts) > 0 {
				k = min(k, int(cuts[i%len(cuts)])+1)
			}
			w.Write(rest[:k])
			rest = rest[k:]
		}
		if w.Len() != int64(len(data)) {
			t.Fatalf("Len() = %d, want %d", w.Len(), len(data))
		}
		head, tail := w.kept()
		got := w.String()
		if len(data) <= limit {
			if got != string(data) {
				t.Fatalf("String() = %q, want all of %q", got, data)
			}
			return
		}
		hm, tm := limit/2, limit-limit/2
		if !bytes.Equal(head, data[:hm]) || !bytes.Equal(tail, data[len(data)-tm:]) {
			t.Fatalf("kept %q + %q of %q (max %d), want its first %d and last %d bytes", head, tail, data, limit, hm, tm)
		}
		i := strings.Index(got, "\n[… ")
		j := strings.LastIndex(got, " bytes cut …]\n")
		if i < 0 || j < i {
			t.Fatalf("String() = %q, want a cut marker", got)
		}
		h, tl := got[:i], got[j+len(" bytes cut …]\n"):]
		var cut int
		if _, err := fmt.Sscanf(got[i:j], "\n[… %d", &cut); err != nil {
			t.Fatalf("marker in %q: %v", got, err)
		}
		if !bytes.HasPrefix(data, []byte(h)) || !bytes.HasSuffix(data, []byte(tl)) || len(h)+cut+len(tl) != len(data) {
			t.Fatalf("String() = %q: head %q + %d cut + tail %q is not %q", got, h, cut, tl, data)
		}
		if utf8.Valid(data) && (!utf8.ValidString(h) || !utf8.ValidString(tl)) {
			t.Fatalf("String() = %q broke valid UTF-8 %q", got, data)
		}
	})
}

func BenchmarkCapWriter(b *testing.B) {
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 2048) // 32 KiB
	b.ReportAllocs()
	b.SetBytes(32 * int64(len(chunk)))
	for b.Loop() {
		w := NewCapWriter(DefaultMaxOutput)
		for range 32 { // 1 MiB
			w.Write(chunk)
		}
		_ = w.String()
	}
}
