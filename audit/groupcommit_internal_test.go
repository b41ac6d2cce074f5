package audit

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/gate"
)

// The group commit: with Fsync durability the disk is waited for before
// every side effect (an intent with an idempotency key) and at the stop,
// and the records written since ride along; the rest are written at once
// but synced with the next such point, or by Sync or Close.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	type step struct {
		rec       Record
		wantSyncs int // total fsyncs after this record
	}
	call := func(key string, base int) []step {
		syncs := base
		if key != "" {
			syncs++
		}
		return []step{
			{Record{Type: ModelCall}, base},
			{Record{Type: Verdict, Decision: DecisionOf(gate.Allow)}, base},
			{Record{Type: Intent, Key: key}, syncs},
			{Record{Type: Result}, syncs},
		}
	}
	var steps []step
	steps = append(steps, step{Record{Type: SessionStart}, 0})
	steps = append(steps, call("", 0)...)                                                  // a read-only call: nothing to wait for
	steps = append(steps, call("k1", 0)...)                                                // a side effect: verdict and intent in one fsync
	steps = append(steps, call("k2", 1)...)                                                // the last result rode with this one
	steps = append(steps, step{Record{Type: Verdict, Decision: DecisionOf(gate.Deny)}, 2}) // a refusal: no effect follows
	steps = append(steps, step{Record{Type: Stop}, 3})

	w, n := syncCounting(t, Fsync)
	for i, s := range steps {
		if err := w.Write(s.rec); err != nil {
			t.Fatal(err)
		}
		if *n != s.wantSyncs {
			t.Fatalf("after record %d (%s, key %q): %d fsyncs, want %d", i+1, s.rec.Type, s.rec.Key, *n, s.wantSyncs)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if *n != 3 {
		t.Errorf("Close synced with nothing new: %d fsyncs, want 3", *n)
	}
}

// Close and Sync make what was written since the last fsync durable;
// with Flush durability nothing is ever synced.
func TestSyncAndCloseCommitTheTail(t *testing.T) {
	t.Parallel()
	w, n := syncCounting(t, Fsync)
	mustWrite(t, w, Record{Type: SessionStart})
	if err := w.Sync(); err != nil || *n != 1 {
		t.Fatalf("Sync: %v, %d fsyncs, want 1", err, *n)
	}
	if err := w.Sync(); err != nil || *n != 1 {
		t.Fatalf("Sync with nothing new: %v, %d fsyncs, want 1", err, *n)
	}
	mustWrite(t, w, Record{Type: Verdict, Decision: DecisionOf(gate.Deny)})
	if err := w.Close(); err != nil || *n != 2 {
		t.Fatalf("Close: %v, %d fsyncs, want 2", err, *n)
	}

	f, n2 := syncCounting(t, Flush)
	mustWrite(t, f, Record{Type: Intent, Key: "k"})
	mustWrite(t, f, Record{Type: Stop})
	if err := f.Close(); err != nil || *n2 != 0 {
		t.Fatalf("Flush: %v, %d fsyncs, want 0", err, *n2)
	}
}

// A failed fsync before an effect fails the Write, and the writer for good:
// the effect must not run unrecorded.
func TestFailedSyncIsSticky(t *testing.T) {
	t.Parallel()
	w, _ := syncCounting(t, Fsync)
	w.fsync = func() error { return errors.New("disk gone") }
	mustWrite(t, w, Record{Type: Verdict, Decision: DecisionOf(gate.Allow)})
	if err := w.Write(Record{Type: Intent, Key: "k"}); err == nil {
		t.Fatal("an intent whose fsync failed was accepted")
	}
	if err := w.Write(Record{Type: Result}); err == nil {
		t.Fatal("a write after a failed fsync succeeded")
	}
}

func syncCounting(t *testing.T, d Durability) (*Writer, *int) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	w := NewWriter(f, "s", WithDurability(d))
	n := new(int)
	w.fsync = func() error { *n++; return f.Sync() }
	return w, n
}

func mustWrite(t *testing.T, w *Writer, r Record) {
	t.Helper()
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
}
