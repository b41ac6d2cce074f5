package audit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/reinhq/rein/audit"
)

// typical is a result record of the usual size: a few hundred bytes of a
// file's head, as read_file returns it.
func typical() audit.Record {
	content := strings.Repeat("     1\tcoffee 3 pcs at 45 kr\n", 10)
	_, size, sum, _ := audit.Clip(content, 4096)
	return audit.Record{Type: audit.Result, Step: 3, CallID: "call_3_1", Tool: "read_file", Content: content,
		Bytes: size, SHA256: sum, DurationMS: 0.031}
}

func records(b *testing.B, w *audit.Writer) {
	b.Helper()
	r := typical()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := w.Write(r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkWrite is the Writer's throughput: to a file with each
// durability, and to io.Discard (encoding and the chain, no I/O).
func BenchmarkWrite(b *testing.B) {
	for _, bc := range []struct {
		name string
		dur  audit.Durability
	}{{"file/flush", audit.Flush}, {"file/fsync", audit.Fsync}} {
		b.Run(bc.name, func(b *testing.B) {
			w, err := audit.Create(b.TempDir(), testSession, audit.WithDurability(bc.dur))
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			records(b, w)
		})
	}
	b.Run("discard", func(b *testing.B) { records(b, audit.NewWriter(io.Discard, testSession)) })
}

// BenchmarkChain is what the hash chain adds to a record: the SHA-256 of the
// line and its hex form (the chain cannot be switched off in the Writer).
func BenchmarkChain(b *testing.B) {
	line, err := json.Marshal(typical())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	var dst [64]byte
	for b.Loop() {
		sum := sha256.Sum256(line)
		hex.Encode(dst[:], sum[:])
	}
}

// BenchmarkEncode is the JSON encoding of a record, the rest of the
// Writer's work.
func BenchmarkEncode(b *testing.B) {
	r := typical()
	r.Prev = audit.Anchor(testSession)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify checks a log of 1000 typical records.
func BenchmarkVerify(b *testing.B) {
	var buf bytes.Buffer
	w := audit.NewWriter(&buf, testSession)
	for range 1000 {
		if err := w.Write(typical()); err != nil {
			b.Fatal(err)
		}
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rep, err := audit.Verify(bytes.NewReader(data))
		if err != nil || !rep.Intact() {
			b.Fatal(rep, err)
		}
	}
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkShow renders the same log as a timeline.
func BenchmarkShow(b *testing.B) {
	var buf bytes.Buffer
	w := audit.NewWriter(&buf, testSession)
	for range 1000 {
		if err := w.Write(typical()); err != nil {
			b.Fatal(err)
		}
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := audit.Show(io.Discard, bytes.NewReader(data), audit.ShowOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
