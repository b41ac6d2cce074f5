package audit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

const testSession = "20261202T100000Z-0badcafe"

// tick is a clock that moves on by a millisecond at every reading.
func tick() func() time.Time {
	t := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

// session is the records of a short session: a call that runs, one that is
// refused, an answer.
func sessionRecords() []audit.Record {
	return []audit.Record{
		{Type: audit.SessionStart, Task: "Sum the notes", Config: json.RawMessage(`{"model":"scripted:s.json","tools":["read_file"],"gates":["availability"],"limits":{"max_steps":8}}`)},
		{Type: audit.ModelCall, Step: 1, Usage: &model.Usage{Input: 100, Output: 10}, Tokens: 110, Text: "I'll read the notes.", Calls: []string{"read_file", "send_email"}},
		{Type: audit.Verdict, Step: 1, CallID: "call_1_1", Tool: "read_file", Args: json.RawMessage(`{"path":"notes.txt"}`), Decision: audit.DecisionOf(gate.Allow), Gate: "pipeline", Reason: "every gate allows it"},
		{Type: audit.Intent, Step: 1, CallID: "call_1_1", Tool: "read_file", Args: json.RawMessage(`{"path":"notes.txt"}`), Effect: audit.EffectOf(tool.ReadOnly)},
		{Type: audit.Result, Step: 1, CallID: "call_1_1", Tool: "read_file", Content: "a 1\nb 2\n", Bytes: 8, SHA256: "x", DurationMS: 0.5},
		{Type: audit.Verdict, Step: 1, CallID: "call_1_2", Tool: "send_email", Args: json.RawMessage(`{"to":"x@example.com"}`), Decision: audit.DecisionOf(gate.Deny), Gate: "availability", Reason: "send_email is not on this session's allowlist"},
		{Type: audit.ModelCall, Step: 2, Usage: &model.Usage{Input: 200, Output: 5}, Tokens: 315, Text: "The sum is 3."},
		{Type: audit.Stop, Stop: "done", Answer: "The sum is 3.", Steps: 2, ToolCalls: 2, Tokens: 315},
	}
}

// writeLog writes records with a real Writer into a real file and returns
// the file's bytes.
func writeLog(t testing.TB, recs []audit.Record, opts ...audit.Option) []byte {
	t.Helper()
	w, err := audit.Create(t.TempDir(), testSession, append([]audit.Option{audit.WithClock(tick())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func lines(data []byte) [][]byte {
	return bytes.SplitAfter(data, []byte("\n"))[:bytes.Count(data, []byte("\n"))]
}

func join(ls ...[]byte) []byte { return bytes.Join(ls, nil) }

func mustVerify(t *testing.T, data []byte) audit.Report {
	t.Helper()
	rep, err := audit.Verify(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestVerifyIntact(t *testing.T) {
	t.Parallel()
	data := writeLog(t, sessionRecords())
	rep := mustVerify(t, data)
	last := lines(data)[7]
	sum := sha256.Sum256(bytes.TrimSuffix(last, []byte("\n")))
	want := audit.Report{Lines: 8, Records: 8, Session: testSession, Complete: true, Head: hex.EncodeToString(sum[:])}
	if rep != want || !rep.Intact() {
		t.Fatalf("got %+v, want %+v", rep, want)
	}
	// Without its stop record the log is intact but not complete.
	rep = mustVerify(t, writeLog(t, sessionRecords()[:5]))
	if !rep.Intact() || rep.Complete || rep.Lines != 5 {
		t.Fatalf("interrupted log: %+v", rep)
	}
	// Fsync makes no difference to the bytes.
	if rep := mustVerify(t, writeLog(t, sessionRecords(), audit.WithDurability(audit.Fsync))); !rep.Complete {
		t.Fatalf("fsync log: %+v", rep)
	}
}

// TestVerifyTampering tampers with a real log in every way the chain is
// meant to catch, and checks that Verify names the first line that shows it.
func TestVerifyTampering(t *testing.T) {
	t.Parallel()
	data := writeLog(t, sessionRecords())
	ls := lines(data)
	other := lines(writeLogSession(t, "20261202T100000Z-0ther000", sessionRecords()))
	swapped := func(i, j int) [][]byte {
		c := slices.Clone(ls)
		c[i], c[j] = c[j], c[i]
		return c
	}
	without := func(i int) [][]byte { return slices.Delete(slices.Clone(ls), i, i+1) }
	with := func(i int, l []byte) [][]byte { return slices.Insert(slices.Clone(ls), i, l) }
	replace := func(i int, old, new string) [][]byte {
		c := slices.Clone(ls)
		c[i] = bytes.Replace(c[i], []byte(old), []byte(new), 1)
		if bytes.Equal(c[i], ls[i]) {
			t.Fatalf("line %d has no %q", i+1, old)
		}
		return c
	}
	// A line put in with the right seq and a correct prev: only its
	// successor shows it.
	forged := rechain(t, ls[2], 3, ls[1])

	tests := []struct {
		name    string
		log     []byte
		bad     int
		problem string
	}{
		{"edited reason", join(replace(5, "allowlist", "allowList")...), 7, "prev is not the SHA-256 of line 6"},
		{"edited answer in the middle", join(replace(4, "a 1", "a 9")...), 6, "prev is not the SHA-256 of line 5"},
		{"edited seq", join(replace(3, `"seq":4`, `"seq":5`)...), 4, "seq 5, want 4"},
		{"edited session", join(replace(2, testSession, "20261202T100000Z-0badcafF")...), 3, "session"},
		{"edited session of line 1", join(replace(0, testSession, "20261202T100000Z-0badcafF")...), 1, "anchor"},
		{"edited time", join(replace(3, "10:00:00.004", "10:00:00.003")...), 5, "prev is not the SHA-256 of line 4"},
		{"first line deleted", join(without(0)...), 1, "seq 2, want 1"},
		{"middle line deleted", join(without(3)...), 4, "seq 5, want 4"},
		{"last-but-one line deleted", join(without(6)...), 7, "seq 8, want 7"},
		{"pair swapped", join(swapped(2, 3)...), 3, "seq 4, want 3"},
		{"first pair swapped", join(swapped(0, 1)...), 1, "seq 2, want 1"},
		{"line repeated", join(with(3, ls[2])...), 4, "seq 3, want 4"},
		{"line forged with a correct prev", join(with(2, forged)...), 4, "seq 3, want 4"},
		{"line forged in place", join(slices.Replace(slices.Clone(ls), 2, 3, forged)...), 4, "prev is not the SHA-256 of line 3"},
		{"line of another session", join(with(3, other[3])...), 4, "session"},
		{"another session's tail", join(append(slices.Clone(ls[:4]), other[4:]...)...), 5, "session"},
		{"CRLF", join(replace(2, "}\n", "}\r\n")...), 4, "prev is not the SHA-256 of line 3"},
		{"not JSON", join(replace(2, `{"seq"`, `["seq"`)...), 3, "not a JSON object"},
		{"not a record", join(replace(2, `"seq":3`, `"seq":"3"`)...), 3, "not a record"},
		{"cut in the last line", data[:len(data)-20], 8, "incomplete last line"},
		{"cut before the last newline", data[:len(data)-1], 8, "incomplete last line"},
		{"cut in a middle line", join(ls[:3]...)[:len(join(ls[:3]...))-30], 3, "incomplete last line"},
		{"empty", nil, 1, "empty"},
		{"time goes back", writeLogClock(t, sessionRecords(), backwards()), 3, "time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := mustVerify(t, tt.log)
			if rep.FirstBad != tt.bad || !strings.Contains(rep.Problem, tt.problem) || rep.Complete || rep.Head != "" {
				t.Fatalf("got line %d %q, want line %d %q (%+v)", rep.FirstBad, rep.Problem, tt.bad, tt.problem, rep)
			}
			if want := bytes.Count(tt.log, []byte("\n")); rep.Lines < want || rep.Lines > want+1 {
				t.Fatalf("%d lines counted, the log has %d", rep.Lines, want)
			}
		})
	}
}

// What the file alone cannot show: a deleted last line, and a last line
// rewritten keeping its seq, time, session and prev. Head shows both.
func TestVerifyBlindSpots(t *testing.T) {
	t.Parallel()
	data := writeLog(t, sessionRecords())
	ls := lines(data)
	orig := mustVerify(t, data)

	cut := mustVerify(t, join(ls[:7]...))
	if !cut.Intact() || cut.Complete || cut.Head == orig.Head {
		t.Fatalf("deleted last line: %+v", cut)
	}
	last := slices.Clone(ls)
	last[7] = bytes.Replace(last[7], []byte("The sum is 3."), []byte("The sum is 9."), 1)
	changed := mustVerify(t, join(last...))
	if !changed.Intact() || !changed.Complete || changed.Head == orig.Head {
		t.Fatalf("rewritten last line: %+v", changed)
	}
}

// Every single-bit flip anywhere in the log is caught, except where the
// last line stays a record with the same seq, session and prev
// (TestVerifyBlindSpots): no later line holds its hash.
func TestVerifyEveryByteFlip(t *testing.T) {
	t.Parallel()
	data := writeLog(t, sessionRecords())
	lastStart := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	for i := range data {
		for _, bit := range []byte{0x01, 0x20, 0x80} {
			c := slices.Clone(data)
			c[i] ^= bit
			rep := mustVerify(t, c)
			if rep.Intact() && (i < lastStart || !sameChainFields(t, data[lastStart:], c[lastStart:])) {
				t.Fatalf("flip %#x at byte %d (%q → %q) not caught", bit, i, data[i], c[i])
			}
		}
	}
}

// sameChainFields reports whether two last lines decode to records with the
// same seq, session and prev. (Their times may differ: a later time is as
// valid as the one written.)
func sameChainFields(t *testing.T, a, b []byte) bool {
	t.Helper()
	var ra, rb audit.Record
	if json.Unmarshal(a, &ra) != nil || json.Unmarshal(b, &rb) != nil {
		return false
	}
	return ra.Seq == rb.Seq && ra.Session == rb.Session && ra.Prev == rb.Prev
}

func TestVerifyLongLine(t *testing.T) {
	t.Parallel()
	long := io.LimitReader(repeat('a'), audit.MaxLine+10)
	rep, err := audit.Verify(io.MultiReader(long, strings.NewReader("\n{}\n")))
	if err != nil || rep.FirstBad != 1 || rep.Lines != 2 || !strings.Contains(rep.Problem, "longer than") {
		t.Fatalf("%+v %v", rep, err)
	}
	// A long line without a newline is still one line.
	rep, err = audit.Verify(io.LimitReader(repeat('a'), audit.MaxLine+10))
	if err != nil || rep.FirstBad != 1 || rep.Lines != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	// A line just under the limit, longer than any read buffer, is read.
	data := writeLog(t, []audit.Record{{Type: audit.SessionStart, Task: strings.Repeat("x", 1<<20)}, {Type: audit.Stop}})
	if rep := mustVerify(t, data); !rep.Complete {
		t.Fatalf("%+v", rep)
	}
}

type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

func TestVerifyReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	data := writeLog(t, sessionRecords())
	_, err := audit.Verify(io.MultiReader(bytes.NewReader(data[:100]), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the read error", err)
	}
}

func writeLogSession(t *testing.T, id string, recs []audit.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := audit.NewWriter(&buf, id, audit.WithClock(tick()))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func writeLogClock(t *testing.T, recs []audit.Record, now func() time.Time) []byte {
	t.Helper()
	return writeLog(t, recs, audit.WithClock(now))
}

// backwards is a clock set back by a second at its third reading.
func backwards() func() time.Time {
	next := tick()
	n := 0
	return func() time.Time {
		n++
		if n == 3 {
			return next().Add(-time.Second)
		}
		return next()
	}
}

// rechain returns line (a record) with seq and prev set as if it followed
// before, as a forger who knows the rules would write it.
func rechain(t *testing.T, line []byte, seq int, before []byte) []byte {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bytes.TrimSuffix(before, []byte("\n")))
	obj["seq"], _ = json.Marshal(seq)
	obj["prev"], _ = json.Marshal(hex.EncodeToString(sum[:]))
	obj["reason"], _ = json.Marshal("forged")
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// Lines of spaces are the Writer's page-alignment padding: no record, not in
// the chain, skipped wherever they are; a record is still checked as before.
func TestVerifyPadding(t *testing.T) {
	t.Parallel()
	ls := lines(writeLog(t, sessionRecords()))
	padded := slices.Insert(slices.Clone(ls), 3, []byte("\n"), []byte("      \n"))
	rep := mustVerify(t, join(padded...))
	if rep.FirstBad != 0 || !rep.Complete {
		t.Fatalf("padded log: %+v", rep)
	}
	// Padding does not hide a change after it: the next record is named by its line.
	bad := slices.Clone(padded)
	bad[5] = bytes.Replace(bad[5], []byte(`"seq":4`), []byte(`"seq":9`), 1)
	if rep := mustVerify(t, join(bad...)); rep.FirstBad != 6 {
		t.Fatalf("change after padding: %+v", rep)
	}
}

// The Writer never lets a record shorter than a page straddle a page
// boundary of the file: a SIGKILL mid-write can then cut only between records.
func TestWriterAlignsRecordsToPages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := audit.Create(dir, "20261202T100000Z-0badcafe")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := w.Write(audit.Record{Type: audit.ModelCall, Step: i, Text: strings.Repeat("x", i*7%900)}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	data, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	for line := range bytes.Lines(data) {
		const pageSize = 4096
		if !audit.Padding(bytes.TrimSuffix(line, []byte("\n"))) && off/pageSize != (off+len(line)-1)/pageSize {
			t.Fatalf("a record at offset %d crosses a page boundary", off)
		}
		off += len(line)
	}
	if rep := mustVerify(t, data); rep.FirstBad != 0 {
		t.Fatalf("%+v", rep)
	}
}
