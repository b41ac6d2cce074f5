package scope_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/gate"
)

// corpusFile holds the path-escape corpus, one JSON object a line:
//
//	{"tool": "read_file", "args": {...}, "setup": "link-dir-out", "expect": "deny", "note": "..."}
//
// tool is one of the file tools; args its arguments, where $OUTSIDE is the
// absolute path of a directory next to the work directory, $WORK the work
// directory's real path and $WORK_ALIAS another name for it through a
// symbolic link; setup names the links made in the work directory (see
// setups in fixture_test.go; "" for none); note says what the entry tries.
//
// expect "deny": the scope gate must refuse the call. "contain": the gate
// allows it, because the path is a literal name inside (URL-encoded or
// Unicode look-alike dots, which no file system reads as "..") or because
// the escape would be the tool's walk following a link. For every entry,
// run through the tool directly with no gate, nothing outside the work
// directory may be read (the canary never appears) or changed.
//
// Two decisions the corpus records: a leading "~" is refused, since a model
// means the home directory by it, though on disk it is a plain name; and a
// backslash, a plain file-name character on Linux, is read as a separator
// by the gate when it looks for "..", so "..\..\x" is refused by the gate
// while the tool, should it get the path, sees one literal name.
const corpusFile = "../../testdata/corpus/path-escapes.jsonl"

type entry struct {
	Line   int             `json:"-"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Setup  string          `json:"setup"`
	Expect string          `json:"expect"`
	Note   string          `json:"note"`
}

func loadCorpus(t testing.TB) []entry {
	t.Helper()
	f, err := os.Open(corpusFile)
	must(t, err)
	defer f.Close()
	var es []entry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e entry
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("%s:%d: %v", corpusFile, n, err)
		}
		if _, ok := setups[e.Setup]; !ok {
			t.Fatalf("%s:%d: unknown setup %q", corpusFile, n, e.Setup)
		}
		if e.Expect != "deny" && e.Expect != "contain" {
			t.Fatalf("%s:%d: expect %q, want deny or contain", corpusFile, n, e.Expect)
		}
		e.Line = n
		es = append(es, e)
	}
	must(t, sc.Err())
	return es
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	es := loadCorpus(t)
	var denies, contains int
	for _, e := range es {
		if e.Expect == "deny" {
			denies++
		} else {
			contains++
		}
	}
	if denies < 45 {
		t.Errorf("the corpus has %d entries to deny, want at least 45", denies)
	}
	var refused, toolErrors atomic.Int32
	t.Run("entries", func(t *testing.T) {
		for _, e := range es {
			t.Run(fmt.Sprintf("line%d", e.Line), func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, e.Setup)
				args := json.RawMessage(f.expand(string(e.Args)))
				tl, ok := f.tools[e.Tool]
				if !ok {
					t.Fatalf("line %d: no tool %q", e.Line, e.Tool)
				}

				v := f.gate.Check(t.Context(), &gate.Call{ID: "c1", Name: e.Tool, Args: args, Tool: tl})
				switch {
				case e.Expect == "deny" && v.Decision != gate.Deny:
					t.Errorf("line %d (%s): the gate says %v (%s), want deny", e.Line, e.Note, v.Decision, v.Reason)
				case e.Expect == "contain" && v.Decision != gate.Allow:
					t.Errorf("line %d (%s): the gate says %v (%s), want allow: the name is harmless", e.Line, e.Note, v.Decision, v.Reason)
				case v.Decision == gate.Deny:
					refused.Add(1)
					checkHint(t, e, f, string(args), v)
				}

				// The tool alone, no gate: nothing outside is read or changed.
				before := f.state(t)
				out, err := tl.Run(t.Context(), args)
				if err != nil {
					toolErrors.Add(1)
				}
				for _, s := range []string{out, fmt.Sprint(err)} {
					if strings.Contains(s, "CANARY") || strings.Contains(s, "root:x:0:0") {
						t.Errorf("line %d (%s): %s read outside the work directory: %.300q", e.Line, e.Note, e.Tool, s)
					}
				}
				if d := diff(before, f.state(t)); d != "" {
					t.Errorf("line %d (%s): %s changed things outside the work directory: %s", e.Line, e.Note, e.Tool, d)
				}
			})
		}
	})
	t.Logf("%d entries: %d to deny, all refused by the gate: %v (%d refused); %d to contain; tool errors %d of %d",
		len(es), denies, int(refused.Load()) == denies, refused.Load(), contains, toolErrors.Load(), len(es))
}

// checkHint asserts that what the model is told names the path it gave and
// the rule in general terms, and reveals no path it did not give.
func checkHint(t *testing.T, e entry, f *fixture, args string, v gate.Verdict) {
	t.Helper()
	h := v.ForModel()
	if !strings.Contains(h, "working directory") {
		t.Errorf("line %d: hint %q does not say what is allowed", e.Line, h)
	}
	for _, secret := range []string{f.work, f.alias, f.outside, f.base} {
		if strings.Contains(h, secret) && !strings.Contains(args, secret) {
			t.Errorf("line %d: hint %q reveals %s", e.Line, h, secret)
		}
	}
	if v.Reason == "" || v.Gate != "scope" {
		t.Errorf("line %d: verdict %+v: want the scope gate's name and a reason for the audit log", e.Line, v)
	}
}
