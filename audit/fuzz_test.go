package audit_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/session"
)

// FuzzVerify checks three things:
//
//   - Verify never panics and its report is consistent, whatever it reads
//     (data read as a log, and Show never panics on it either);
//   - a log a Writer wrote from fuzzed records always verifies;
//   - changing any one byte of such a log is caught, unless the change is in
//     the last line and leaves its seq, session and prev as they were: no
//     later line holds the last line's hash, so nothing in the file can
//     show it (docs/audit-log.md).
func FuzzVerify(f *testing.F) {
	for _, name := range []string{"support-desk-reader", "loop-budget", "run-accept-edits"} {
		data, err := os.ReadFile(filepath.Join("testdata", "show", name+".jsonl"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "", uint8(3), uint32(len(data)/2), byte('x'))
	}
	f.Add([]byte("{}\n"), "20261202T100000Z-0badcafe", uint8(0), uint32(0), byte('{'))
	f.Add([]byte(`{"seq":1,"session":"s","prev":"","time":"2026-12-02T10:00:00Z"}`), "s", uint8(7), uint32(40), byte('\n'))
	f.Add([]byte("\n\n\xff"), "a-b", uint8(9), uint32(1), byte(0))
	f.Add([]byte("text\x1b[2J\u202e with \"quotes\" and \\ and \n"), "x", uint8(200), uint32(99999), byte('"'))
	f.Fuzz(func(t *testing.T, data []byte, id string, n uint8, pos uint32, b byte) {
		// Anything at all.
		rep, err := audit.Verify(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		consistent(t, rep, data)
		if err := audit.Show(io.Discard, bytes.NewReader(data), audit.ShowOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := audit.Show(io.Discard, bytes.NewReader(data), audit.ShowOptions{Refusals: true}); err != nil {
			t.Fatal(err)
		}

		// A log written by a Writer, its texts taken from data.
		if session.CheckID(id) != nil {
			id = testSession
		}
		var buf bytes.Buffer
		w := audit.NewWriter(&buf, id, audit.WithClock(tick()))
		recs := fuzzRecords(data, int(n%12)+1)
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		log := buf.Bytes()
		rep, err = audit.Verify(bytes.NewReader(log))
		if err != nil || !rep.Intact() || rep.Lines != len(recs) || rep.Session != id || rep.Complete != (recs[len(recs)-1].Type == audit.Stop) {
			t.Fatalf("a Writer's log does not verify: %+v %v\n%s", rep, err, log)
		}

		// The same log with one byte changed.
		i := int(pos % uint32(len(log)))
		if log[i] == b {
			return
		}
		changed := bytes.Clone(log)
		changed[i] = b
		rep, err = audit.Verify(bytes.NewReader(changed))
		if err != nil {
			t.Fatal(err)
		}
		consistent(t, rep, changed)
		if rep.Intact() {
			lastStart := bytes.LastIndexByte(log[:len(log)-1], '\n') + 1
			if i < lastStart || !sameChainFields(t, log[lastStart:], changed[lastStart:]) {
				t.Fatalf("byte %d changed from %q to %q and not caught:\n%s", i, log[i], b, changed)
			}
		}
	})
}

// consistent checks the report's own rules.
func consistent(t *testing.T, rep audit.Report, data []byte) {
	t.Helper()
	nl := bytes.Count(data, []byte("\n"))
	switch {
	case rep.Lines != nl && rep.Lines != nl+1:
		t.Fatalf("%d lines counted in a log with %d newlines", rep.Lines, nl)
	case rep.Intact() && (rep.Problem != "" || rep.Head == "" || len(data) == 0 || data[len(data)-1] != '\n'):
		t.Fatalf("intact report %+v", rep)
	case !rep.Intact() && (rep.Problem == "" || rep.Complete || rep.Head != "" || rep.FirstBad > max(rep.Lines, 1)):
		t.Fatalf("broken report %+v", rep)
	}
}

// fuzzRecords makes n records of every type from the bytes of data.
func fuzzRecords(data []byte, n int) []audit.Record {
	types := []audit.Type{audit.SessionStart, audit.ModelCall, audit.Verdict, audit.Intent, audit.Result, audit.Abort, audit.Stop}
	text := string(data)
	var args json.RawMessage
	if json.Valid(data) {
		args = data
	}
	recs := make([]audit.Record, n)
	for i := range recs {
		cut := min(len(text), i*7)
		recs[i] = audit.Record{
			Type: types[(i+len(data))%len(types)], Step: i, CallID: text[:cut/2], Tool: text[cut/2 : cut],
			Args: args, Text: text, Content: text[cut:], Reason: text, Snapshots: []string{text[:cut]},
		}
	}
	return recs
}
