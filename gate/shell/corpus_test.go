package shell

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate"
)

// corpusEntry is one line of testdata/corpus/shell-*.jsonl.
type corpusEntry struct {
	Command string `json:"command"`
	Class   string `json:"class"`
	Note    string `json:"note"`
	line    int
}

const corpusDir = "../../testdata/corpus"

// fakeHome is the home the corpus assumes; the real $HOME is never used.
const fakeHome = "/home/agent"

func loadCorpus(t testing.TB, name string) []corpusEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var e corpusEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%s:%d: %v", name, n, err)
		}
		e.line = n
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// TestCorpus runs the attack and benign corpora: every dangerous command
// must be blocked (Deny or Ask) and every benign one allowed; each miss is
// an error of its own. A dangerous command blocked with the other decision
// than its class is logged, and the rates are logged.
func TestCorpus(t *testing.T) {
	t.Parallel()
	o := Options{WorkDir: t.TempDir(), Home: fakeHome}
	dangerous := loadCorpus(t, "shell-dangerous.jsonl")
	benign := loadCorpus(t, "shell-benign.jsonl")
	if len(dangerous) == 0 || len(benign) == 0 {
		t.Fatal("empty corpus")
	}

	blocked, exact := 0, 0
	for _, e := range dangerous {
		a := Analyze(e.Command, o)
		want := gate.Deny
		if e.Class == "ask-class" {
			want = gate.Ask
		}
		switch {
		case a.Decision == gate.Allow:
			t.Errorf("shell-dangerous.jsonl:%d [%s] ALLOWED %q (%s)", e.line, e.Class, e.Command, e.Note)
		case a.Decision != want:
			blocked++
			t.Logf("shell-dangerous.jsonl:%d [%s] %s instead of %s: %q (%s) — %s", e.line, e.Class, a.Decision, want, e.Command, e.Note, a.Summary())
		default:
			blocked++
			exact++
		}
	}
	allowed := 0
	for _, e := range benign {
		a := Analyze(e.Command, o)
		if a.Decision == gate.Allow {
			allowed++
			continue
		}
		t.Errorf("shell-benign.jsonl:%d %s %q (%s) — %v", e.line, a.Decision, e.Command, e.Note, a.Findings)
	}
	bRate := float64(blocked) / float64(len(dangerous))
	aRate := float64(allowed) / float64(len(benign))
	t.Logf("dangerous: %d/%d blocked (%.1f%%), %d with the expected decision; benign: %d/%d allowed (%.1f%%)",
		blocked, len(dangerous), 100*bRate, exact, allowed, len(benign), 100*aRate)
}
