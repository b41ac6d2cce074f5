package audit_test

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/session"
)

// The audit log's fuzz targets. Each works in memory on small inputs (a
// seed corpus of short logs under testdata/fuzz, at most maxFuzzText bytes
// of fuzzed text per written record), so the fuzzer runs thousands of
// executions a second instead of minimizing multi-kilobyte logs:
//
//   - FuzzVerify: Verify never panics and its report is consistent,
//     whatever it reads; and when what it reads is an intact log, changing
//     any one byte of it is caught, unless the change is in the last line
//     and leaves its seq, session and prev as they were: no later line holds
//     the last line's hash, so nothing in the file can show it
//     (docs/audit-log.md);
//   - FuzzWriter: a log a Writer wrote from fuzzed records always
//     verifies, and a one-byte change of it is caught the same way;
//   - FuzzShow: Show never panics, whatever it reads.

func FuzzVerify(f *testing.F) {
	f.Add([]byte("{}\n"), uint32(0), byte('{'))
	f.Add([]byte(`{"seq":1,"session":"s","prev":"","time":"2026-12-02T10:00:00Z"}`), uint32(40), byte('\n'))
	f.Add([]byte("\n\n\xff"), uint32(1), byte(0))
	f.Fuzz(func(t *testing.T, data []byte, pos uint32, b byte) {
		rep, err := audit.Verify(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		consistent(t, rep, data)
		if rep.Intact() {
			oneByteChangeCaught(t, data, pos, b)
		}
	})
}

func FuzzWriter(f *testing.F) {
	f.Add([]byte("{}\n"), testSession, uint8(0), uint32(0), byte('{'))
	f.Add([]byte(`{"path":"a.txt"}`), "s", uint8(7), uint32(40), byte('\n'))
	f.Add([]byte("\n\n\xff"), "a-b", uint8(9), uint32(1), byte(0))
	f.Add([]byte("text\x1b[2J\u202e with \"quotes\" and \\ and \n"), "x", uint8(200), uint32(99999), byte('"'))
	f.Fuzz(func(t *testing.T, data []byte, id string, n uint8, pos uint32, b byte) {
		if session.CheckID(id) != nil {
			id = testSession
		}
		var buf bytes.Buffer
		w := audit.NewWriter(&buf, id, audit.WithClock(tick()))
		recs := fuzzRecords(data, int(n%8)+1)
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		log := buf.Bytes()
		rep, err := audit.Verify(bytes.NewReader(log))
		if err != nil || !rep.Intact() || rep.Lines != len(recs) || rep.Session != id || rep.Complete != (recs[len(recs)-1].Type == audit.Stop) {
			t.Fatalf("a Writer's log does not verify: %+v %v\n%s", rep, err, log)
		}
		oneByteChangeCaught(t, log, pos, b)
	})
}

func FuzzShow(f *testing.F) {
	f.Add([]byte("{}\n"), false)
	f.Add([]byte("text\x1b[2J\u202e with \"quotes\" and \\ and \n"), true)
	f.Fuzz(func(t *testing.T, data []byte, refusals bool) {
		if err := audit.Show(io.Discard, bytes.NewReader(data), audit.ShowOptions{Refusals: refusals}); err != nil {
			t.Fatal(err)
		}
	})
}

// oneByteChangeCaught checks that log, which verifies, does not verify with
// byte pos (modulo its length) set to b, unless the change is in the last
// line and keeps its chain fields.
func oneByteChangeCaught(t *testing.T, log []byte, pos uint32, b byte) {
	t.Helper()
	i := int(pos % uint32(len(log)))
	if log[i] == b {
		return
	}
	changed := bytes.Clone(log)
	changed[i] = b
	rep, err := audit.Verify(bytes.NewReader(changed))
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

// maxFuzzText is how much of the fuzzer's data goes into each text field of
// a written record: enough to reach every escape, small enough to stay fast.
const maxFuzzText = 128

// fuzzRecords makes n records of every type from the bytes of data.
func fuzzRecords(data []byte, n int) []audit.Record {
	types := []audit.Type{audit.SessionStart, audit.ModelCall, audit.Verdict, audit.Intent, audit.Result, audit.Abort, audit.Stop}
	text := string(data[:min(len(data), maxFuzzText)])
	var args json.RawMessage
	if json.Valid([]byte(text)) {
		args = json.RawMessage(text)
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
