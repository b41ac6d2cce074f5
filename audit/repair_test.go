package audit_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

// logEndingIn writes a session's log whose last record has content of size
// bytes, and returns the log and where its last line starts.
func logEndingIn(t *testing.T, dir string, size int) ([]byte, int) {
	t.Helper()
	w, err := audit.Create(dir, testSession, audit.WithClock(tick()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []audit.Record{
		{Type: audit.SessionStart, Task: "Write the big file."},
		{Type: audit.ModelCall, Step: 1, Calls: []string{"write_file"}},
		{Type: audit.Verdict, Step: 1, CallID: "call_1_1", Tool: "write_file", Decision: audit.DecisionOf(gate.Allow), Gate: "pipeline"},
		{Type: audit.Intent, Step: 1, CallID: "call_1_1", Tool: "write_file", Effect: audit.EffectOf(tool.Reversible), Key: "k",
			Args: []byte(`{"path":"big.txt","content":"` + strings.Repeat("é\\u001b", size/8) + `"}`)},
	} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(audit.FileName(dir, testSession))
	if err != nil {
		t.Fatal(err)
	}
	return data, bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
}

// A log cut anywhere inside its last record — a record shorter than a page,
// and one longer, whose write a SIGKILL can cut — is refused by Append with
// the command that repairs it; Repair drops exactly the cut line, after
// keeping a copy of the whole log, and the session can be continued.
func TestRepairEveryCut(t *testing.T) {
	for _, c := range []struct {
		name   string
		size   int
		stride int // every offset in memory; on disk (Append, Repair: fsyncs) every stride-th
	}{
		{"short record", 200, 7},
		{"record over 4 KiB", 6000, 211},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			whole, start := logEndingIn(t, dir, c.size)
			if c.size > 4096 && len(whole)-start < 4096 {
				t.Fatalf("the last record has only %d bytes", len(whole)-start)
			}
			path := audit.FileName(dir, testSession)
			for k := 1; k < len(whole)-start; k++ { // k bytes of the last line made it (all of it but its newline at most)
				cut := whole[:start+k]
				// Every offset: what Append and Repair see.
				if c, ok, err := audit.FindCut(cut); err != nil || !ok || c.Offset != int64(start) || c.Size != k {
					t.Fatalf("cut at %d: FindCut: %+v %v %v", k, c, ok, err)
				}
				// Every stride-th one, and the page boundary, on disk.
				if k%c.stride != 0 && k != len(whole)-start-1 && k != 4096-start%4096 {
					continue
				}
				if err := os.WriteFile(path, cut, 0o600); err != nil {
					t.Fatal(err)
				}
				_, _, err := audit.Append(path)
				var ce *audit.CutError
				if !errors.As(err, &ce) || ce.Cut.Offset != int64(start) || ce.Cut.Size != k ||
					!strings.Contains(err.Error(), "rein audit repair "+path) {
					t.Fatalf("cut at %d: Append: %v", k, err)
				}
				copies, _ := filepath.Glob(path + ".cut-*")
				for _, f := range copies {
					os.Remove(f)
				}
				r, ok, err := audit.Repair(path, time.Date(2026, 12, 3, 10, 0, 0, k, time.UTC))
				if err != nil || !ok || r.Cut.Offset != int64(start) || r.Cut.Size != k {
					t.Fatalf("cut at %d: Repair: %+v %v %v", k, r, ok, err)
				}
				if !utf8.ValidString(r.Cut.Head) || strings.ContainsFunc(r.Cut.Head, unicode.IsControl) ||
					!strings.HasPrefix(r.Cut.Head, string(cut[start:start+min(k, 8)])) {
					t.Fatalf("cut at %d: head %q", k, r.Cut.Head)
				}
				if got, _ := os.ReadFile(path); !bytes.Equal(got, whole[:start]) {
					t.Fatalf("cut at %d: the repaired log is not the log up to its last whole line", k)
				}
				if kept, _ := os.ReadFile(r.Copy); !bytes.Equal(kept, cut) {
					t.Fatalf("cut at %d: the copy %s is not the log as it was", k, r.Copy)
				}
				w, recs, err := audit.Append(path)
				if err != nil || len(recs) != 3 {
					t.Fatalf("cut at %d: the repaired log cannot be continued: %v", k, err)
				}
				if err := w.Write(audit.Record{Type: audit.Stop, Stop: "error"}); err != nil {
					t.Fatal(err)
				}
				w.Close()
				data, _ := os.ReadFile(path)
				if rep, err := audit.Verify(bytes.NewReader(data)); err != nil || !rep.Intact() || !rep.Complete {
					t.Fatalf("cut at %d: %+v %v", k, rep, err)
				}
			}
		})
	}
}

// Repair drops a cut last line and nothing else: an intact log is left as
// it is, and any other damage is refused with a pointer to verify.
func TestRepairRefusesOtherDamage(t *testing.T) {
	dir := t.TempDir()
	whole, start := logEndingIn(t, dir, 100)
	path := audit.FileName(dir, testSession)
	if _, ok, err := audit.Repair(path, time.Now()); ok || err != nil {
		t.Fatalf("intact log: ok %v, %v", ok, err)
	}
	edited := bytes.Replace(bytes.Clone(whole), []byte("Write the big"), []byte("Write the odd"), 1)
	removed := append(bytes.Clone(whole[:bytes.IndexByte(whole, '\n')+1]), whole[bytes.Index(whole, []byte(`"seq":3`))-1:]...)
	cutInside := append(append(bytes.Clone(whole[:start-5]), '\n'), whole[start:len(whole)-3]...) // a cut line, then more
	foreign := append(bytes.Clone(whole[:start]), bytes.Replace(whole[start:len(whole)-9], []byte(`"seq":4`), []byte(`"seq":9`), 1)...)
	for name, data := range map[string][]byte{"edited": edited, "removed": removed, "cut not last": cutInside, "seq does not follow": foreign} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, ok, err := audit.Repair(path, time.Now())
		var de *audit.DamageError
		if ok || !errors.As(err, &de) || !strings.Contains(err.Error(), "rein audit verify") {
			t.Fatalf("%s: ok %v, %v", name, ok, err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
			t.Fatalf("%s: the log was changed", name)
		}
		if copies, _ := filepath.Glob(path + ".cut-*"); len(copies) != 0 {
			t.Fatalf("%s: a copy was made: %v", name, copies)
		}
		if _, _, err := audit.Append(path); err == nil || errors.As(err, new(*audit.CutError)) {
			t.Fatalf("%s: Append: %v", name, err)
		}
	}
}
