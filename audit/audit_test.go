package audit_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/internal/statedir"
)

// check walks a log and checks sequence, session and hash chain.
func check(data []byte, session string) (int, error) {
	prev := audit.Anchor(session)
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		n++
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return n, fmt.Errorf("line %d: %w", n, err)
		}
		if r.Seq != uint64(n) || r.Session != session || r.Prev != prev || r.Time.IsZero() {
			return n, fmt.Errorf("line %d: seq %d session %q prev %s (want %s)", n, r.Seq, r.Session, r.Prev, prev)
		}
		sum := sha256.Sum256(sc.Bytes())
		prev = hex.EncodeToString(sum[:])
	}
	return n, nil
}

func verify(t *testing.T, data []byte, session string) int {
	t.Helper()
	n, err := check(data, session)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestChain(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := audit.NewWriter(&buf, "s1")
	for _, ty := range []audit.Type{audit.SessionStart, audit.ModelCall, audit.Verdict, audit.Intent, audit.Result, audit.Stop} {
		if err := w.Write(audit.Record{Type: ty, Text: "x\ny"}); err != nil {
			t.Fatal(err)
		}
	}
	data := buf.Bytes()
	if n := verify(t, data, "s1"); n != 6 {
		t.Fatalf("%d records", n)
	}
	if bytes.Count(data, []byte("\n")) != 6 {
		t.Fatal("one line per record")
	}
	// Tampering breaks the chain at the changed line's successor.
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	lines[2] = bytes.Replace(lines[2], []byte(`"verdict"`), []byte(`"verdicT"`), 1)
	tampered := append(bytes.Join(lines, []byte("\n")), '\n')
	if n, err := check(tampered, "s1"); err == nil || n != 4 {
		t.Fatalf("a changed line 3 was not caught at line 4: %d, %v", n, err)
	}
}

func TestObserverSeesStampedRecords(t *testing.T) {
	t.Parallel()
	var seen []audit.Record
	fixed := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	w := audit.NewWriter(&bytes.Buffer{}, "s", audit.WithObserver(func(r audit.Record) { seen = append(seen, r) }),
		audit.WithClock(func() time.Time { return fixed }))
	_ = w.Write(audit.Record{Type: audit.Stop})
	_ = w.Write(audit.Record{Type: audit.Stop})
	if len(seen) != 2 || seen[1].Seq != 2 || seen[1].Prev == seen[0].Prev || !seen[0].Time.Equal(fixed) {
		t.Fatalf("%+v", seen)
	}
}

type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

// A writer that failed once fails for good: no record after a lost one.
func TestStickyFailure(t *testing.T) {
	t.Parallel()
	w := audit.NewWriter(&failAfter{n: 1}, "s")
	if err := w.Write(audit.Record{Type: audit.Intent}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(audit.Record{Type: audit.Result}); err == nil {
		t.Fatal("write to a full disk succeeded")
	}
	if err := w.Write(audit.Record{Type: audit.Stop}); err == nil {
		t.Fatal("a write after a failure succeeded")
	}
}

func TestCreate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nested", "audit")
	w, err := audit.Create(dir, "20261202T100000Z-abcd", audit.WithDurability(audit.Fsync))
	if err != nil {
		t.Fatal(err)
	}
	if w.Path() != filepath.Join(dir, "20261202T100000Z-abcd.jsonl") {
		t.Fatal(w.Path())
	}
	if err := w.Write(audit.Record{Type: audit.SessionStart}); err != nil {
		t.Fatal(err)
	}
	// Written before Write returned, without Close.
	data, err := os.ReadFile(w.Path())
	if err != nil || verify(t, data, "20261202T100000Z-abcd") != 1 {
		t.Fatalf("%s %v", data, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(audit.Record{Type: audit.Stop}); !errors.Is(err, audit.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
	info, _ := os.Stat(w.Path())
	if info.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600: it holds what the agent read", info.Mode().Perm())
	}
	if _, err := audit.Create(dir, "20261202T100000Z-abcd"); err == nil {
		t.Fatal("Create reused an existing log")
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden", strings.Repeat("a", 200)} {
		if _, err := audit.Create(dir, bad); err == nil {
			t.Errorf("session id %q accepted", bad)
		}
	}
}

func TestConcurrentWrites(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := audit.NewWriter(&buf, "s")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				_ = w.Write(audit.Record{Type: audit.Result, Content: strings.Repeat("z", 100)})
			}
		})
	}
	wg.Wait()
	if n := verify(t, buf.Bytes(), "s"); n != 400 {
		t.Fatalf("%d records", n)
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	full := strings.Repeat("é", 10) // 20 bytes
	clipped, size, sum, cut := audit.Clip(full, 5)
	if !cut || size != 20 || !utf8.ValidString(clipped) || len(clipped) > 5 || clipped != "éé" {
		t.Fatalf("%q %d %v", clipped, size, cut)
	}
	want := sha256.Sum256([]byte(full))
	if sum != hex.EncodeToString(want[:]) {
		t.Fatal("the hash must be of the full result")
	}
	if c, _, _, cut := audit.Clip("short", 10); cut || c != "short" {
		t.Fatal("short text was cut")
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	if d, _ := audit.DefaultDir(); d != "/state/rein/audit" {
		t.Fatal(d)
	}
	// The home fallback is statedir's (tested there); a test binary never
	// reaches it, so no test writes into the user's state dir.
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/u")
	if d, err := audit.DefaultDir(); !errors.Is(err, statedir.ErrUnderTest) {
		t.Fatalf("DefaultDir under test without XDG_STATE_HOME = %q, %v; want ErrUnderTest", d, err)
	}
}
