package audit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent/stop"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// TestPreTypedLog reads a log written by rein before the record's decision,
// effect and stop were typed (testdata/pre-typed.jsonl, written with the
// string fields): it still verifies, every record reads back with the typed
// values, and writing a record again gives the very same bytes.
func TestPreTypedLog(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "pre-typed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(bytes.NewReader(data))
	if err != nil || !rep.Intact() || !rep.Complete {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
	type typed struct {
		decision audit.Decision
		effect   audit.Effect
		stop     stop.Reason
	}
	var got []typed
	for line := range bytes.Lines(data) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		if audit.Padding(line) {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, line) {
			t.Errorf("record %d written again differs:\n got %s\nwant %s", r.Seq, again, line)
		}
		if !r.Decision.IsZero() || !r.Effect.IsZero() || r.Stop != "" {
			got = append(got, typed{r.Decision, r.Effect, r.Stop})
		}
	}
	d, e := audit.DecisionOf, audit.EffectOf
	want := []typed{
		{decision: d(gate.Allow)}, {effect: e(tool.ReadOnly)},
		{decision: d(gate.Allow)}, {effect: e(tool.Reversible)},
		{decision: d(gate.Ask)}, {decision: d(gate.Allow)}, {effect: e(tool.Irreversible)},
		{stop: stop.Aborted}, {decision: d(gate.Deny)}, {stop: stop.MaxSteps}, {stop: stop.Budget},
		{stop: stop.Timeout}, {stop: stop.Error}, {stop: stop.Done},
	}
	if len(got) != len(want) {
		t.Fatalf("typed fields %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("typed record %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestTypedFieldsRoundTrip writes each decision, effect and stop reason and
// reads it back; a record without them writes none of the three keys.
func TestTypedFieldsRoundTrip(t *testing.T) {
	t.Parallel()
	var recs []audit.Record
	for _, g := range []gate.Decision{gate.Allow, gate.Ask, gate.Deny} {
		recs = append(recs, audit.Record{Type: audit.Verdict, Decision: audit.DecisionOf(g)})
	}
	for _, x := range []tool.Effect{tool.ReadOnly, tool.Reversible, tool.Irreversible} {
		recs = append(recs, audit.Record{Type: audit.Intent, Effect: audit.EffectOf(x)})
	}
	for _, s := range stop.Reasons() {
		recs = append(recs, audit.Record{Type: audit.Stop, Stop: s})
	}
	recs = append(recs, audit.Record{Type: audit.Result, Source: model.Source{Kind: model.SourceWebPage, Location: "https://example.com/final"}})
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back audit.Record
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if back.Decision != r.Decision || back.Effect != r.Effect || back.Stop != r.Stop || back.Source != r.Source {
			t.Errorf("%s read back as %+v", b, back)
		}
	}
	b, err := json.Marshal(audit.Record{Type: audit.ModelCall})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"decision"`, `"effect"`, `"stop"`, `"source"`} {
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("a model_call record holds %s: %s", key, b)
		}
	}
	if _, err := json.Marshal(audit.Record{Type: audit.Verdict, Decision: audit.DecisionOf(gate.Decision(7))}); err == nil {
		t.Error("a decision that is none of allow, ask, deny was written")
	}
	if _, err := json.Marshal(audit.Record{Type: audit.Stop, Stop: "halted"}); err == nil {
		t.Error("an unknown stop reason was written")
	}
}

// TestUnknownTypedValueIsDamage: a log whose decision, effect or stop names
// none of the known values (edited, or written by something else) is
// reported by Verify at that line and skipped as damaged by Show; it never
// reads as some decision (or a source kind as some source).
func TestUnknownTypedValueIsDamage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		field string
		value any
	}{
		{"decision", "Allow"}, {"decision", "permit"}, {"decision", ""},
		{"effect", "harmless"}, {"effect", "read_only"},
		{"stop", "finished"}, {"stop", "DONE"},
		{"source", map[string]string{"kind": "web"}}, {"source", map[string]string{"kind": "Web_Page", "location": "https://x"}},
	} {
		t.Run(fmt.Sprint(c.field, "=", c.value), func(t *testing.T) {
			t.Parallel()
			recs := []audit.Record{
				{Type: audit.SessionStart, Task: "t"},
				{Type: audit.Verdict, Step: 1, CallID: "c1", Tool: "read_file", Decision: audit.DecisionOf(gate.Deny), Gate: "scope"},
			}
			// The bad value goes into the last record, chained as rein
			// would have chained it: only its content is wrong.
			var buf bytes.Buffer
			w := audit.NewWriter(&buf, testSession)
			for _, r := range recs {
				if err := w.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			var m map[string]any
			if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
				t.Fatal(err)
			}
			m[c.field] = c.value
			bad, _ := json.Marshal(m)
			data := lines[0] + "\n" + string(bad) + "\n"

			rep, err := audit.Verify(strings.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if rep.FirstBad != 2 || !strings.Contains(rep.Problem, c.field) {
				t.Errorf("verify: first bad %d, problem %q; want line 2, naming the %s", rep.FirstBad, rep.Problem, c.field)
			}
			var out bytes.Buffer
			if err := audit.Show(&out, strings.NewReader(data), audit.ShowOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "line 2") || strings.Contains(out.String(), "REFUSED") {
				t.Errorf("show did not report line 2 as damaged:\n%s", out.String())
			}
		})
	}
}
