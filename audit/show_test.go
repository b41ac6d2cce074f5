package audit_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

var update = flag.Bool("update", false, "rewrite testdata/show: the golden files and synthetic.jsonl")

// synthetic is a session with every kind of record the real demos do not
// write: a write with a key and snapshots, a failed and a cut result, a
// model error, a budget stop, an abort, an unknown type, and text that tries
// to drive a terminal.
func synthetic() []audit.Record {
	long := strings.Repeat("line of output\n", 400)
	clipped, size, sum, cut := audit.Clip(long, 4096)
	return []audit.Record{
		{Type: audit.SessionStart, Task: "Tidy the notes\nand report", Config: json.RawMessage(
			`{"model":"scripted:tidy.json","tools":["read_file","write_file","run_bash"],"gates":["availability","scope","permission","approval"],` +
				`"limits":{"max_steps":5,"max_tool_calls":0,"max_tokens":1000,"max_cost_usd":0.5,"max_wall":"1m0s"},"system":"You tidy files.",` +
				`"meta":{"workdir":"/work/notes","config":{"permissions":{"mode":"accept-edits"}}}}`)},
		{Type: audit.ModelCall, Step: 1, Usage: &model.Usage{Input: 300, Output: 40}, Tokens: 340,
			Text: "I'll write the file.\x1b[2J\u202eevil", Calls: []string{"write_file", "run_bash"}, ModelStop: "tool_use", DurationMS: 12.5},
		{Type: audit.Verdict, Step: 1, CallID: "call_1_1", Tool: "write_file", Args: json.RawMessage(`{"path":"notes.txt", "content":"tidy"}`),
			Decision: audit.DecisionOf(gate.Allow), Gate: "pipeline", Reason: "every gate allows it"},
		{Type: audit.Intent, Step: 1, CallID: "call_1_1", Tool: "write_file", Args: json.RawMessage(`{"path":"notes.txt","content":"tidy"}`),
			Effect: audit.EffectOf(tool.Reversible), Key: "9f2c1e0a7b3d5c4e6f8a0b1c", Snapshots: []string{"snap-0001", "snap-0002"}},
		{Type: audit.Result, Step: 1, CallID: "call_1_1", Tool: "write_file", Key: "9f2c1e0a7b3d5c4e6f8a0b1c",
			Content: "wrote notes.txt (4 bytes)", Bytes: 25, SHA256: "ab", DurationMS: 0.75},
		{Type: audit.Verdict, Step: 1, CallID: "call_1_2", Tool: "run_bash", Args: json.RawMessage(`{"command":"cat notes.txt"}`),
			Decision: audit.DecisionOf(gate.Allow), Gate: "approval", Reason: "run_bash asks in this mode: the approver said yes"},
		{Type: audit.Intent, Step: 1, CallID: "call_1_2", Tool: "run_bash", Args: json.RawMessage(`{"command":"cat notes.txt"}`), Effect: audit.EffectOf(tool.Irreversible), Key: "0011"},
		{Type: audit.Result, Step: 1, CallID: "call_1_2", Tool: "run_bash", Key: "0011", Content: clipped, Bytes: size, SHA256: sum, Truncated: cut, DurationMS: 30},
		{Type: audit.ModelCall, Step: 2, Usage: &model.Usage{Input: 500, Output: 20}, Tokens: 860, Text: "", Calls: []string{"read_file", "write_file"}},
		{Type: audit.Verdict, Step: 2, CallID: "call_2_1", Tool: "read_file", Args: json.RawMessage(`{"path":"../secret"}`),
			Decision: audit.DecisionOf(gate.Deny), Gate: "scope", Reason: "../secret is outside the work directory"},
		{Type: audit.Verdict, Step: 2, CallID: "call_2_2", Tool: "write_file", Args: json.RawMessage(`"{\"path\": broken"`),
			Decision: audit.DecisionOf(gate.Deny), Gate: "validation", Reason: "the arguments are not JSON"},
		{Type: audit.ModelCall, Step: 3, Error: "provider said 529: overloaded", DurationMS: 1000},
		{Type: audit.ModelCall, Step: 4, Usage: &model.Usage{Input: 600, Output: 60}, Tokens: 1520, Text: "Again.", Calls: []string{"read_file"}},
		{Type: audit.Verdict, Step: 4, Decision: audit.DecisionOf(gate.Deny), Gate: "budget", Reason: "token budget exceeded: 1520 tokens used of 1000"},
		{Type: audit.Verdict, Step: 4, CallID: "call_4_1", Tool: "run_bash", Args: json.RawMessage(`{"command":"sleep 100"}`), Decision: audit.DecisionOf(gate.Allow), Gate: "pipeline", Reason: "every gate allows it"},
		{Type: audit.Intent, Step: 4, CallID: "call_4_1", Tool: "run_bash", Args: json.RawMessage(`{"command":"sleep 100"}`), Effect: audit.EffectOf(tool.Irreversible), Key: "77aa"},
		{Type: audit.Abort, Reason: "interrupt", Step: 4, CallID: "call_4_1", Tool: "run_bash", Key: "77aa"},
		{Type: "checkpoint"},
		{Type: audit.Stop, Stop: "aborted", Steps: 4, ToolCalls: 5, Tokens: 1520, Error: "interrupt"},
	}
}

// TestShowGolden renders every log in testdata/show (real demo logs, and
// synthetic.jsonl) as a timeline and as refusals, against golden files.
func TestShowGolden(t *testing.T) {
	synth := writeLog(t, synthetic())
	path := filepath.Join("testdata", "show", "synthetic.jsonl")
	if *update {
		if err := os.WriteFile(path, synth, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, synth) {
		t.Fatalf("%s is not what synthetic() writes (%v): run go test -update", path, err)
	}
	logs, err := filepath.Glob(filepath.Join("testdata", "show", "*.jsonl"))
	if err != nil || len(logs) < 5 {
		t.Fatalf("%d logs in testdata/show (%v)", len(logs), err)
	}
	for _, log := range logs {
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if rep := mustVerify(t, data); !rep.Intact() {
			t.Fatalf("%s: %+v", log, rep)
		}
		for suffix, o := range map[string]audit.ShowOptions{".golden": {}, ".refusals.golden": {Refusals: true}} {
			var out bytes.Buffer
			if err := audit.Show(&out, bytes.NewReader(data), o); err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(log, ".jsonl") + suffix
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", log, golden, out.Bytes())
			}
		}
	}
}

// Text from the model, the tools or a forged log cannot reach the terminal
// raw: no escape sequence, no bidirectional override, no line break.
func TestShowEscapes(t *testing.T) {
	t.Parallel()
	evil := "a\x1b]0;pwned\x07b\x1b[2Jc\u202ed\u2066e\r\nf\x00g\u009bh\u2028i"
	rec := audit.Record{Type: audit.ModelCall, Step: 1, Text: evil}
	recs := []audit.Record{
		{Type: audit.SessionStart, Task: evil, Config: json.RawMessage(`{"model":"m\u001b[31m\u202e"}`)},
		rec,
		{Type: audit.Verdict, Step: 1, CallID: evil, Tool: evil, Args: json.RawMessage(`{"x":"\u001b[2J"}`), Decision: audit.DecisionOf(gate.Deny), Gate: evil, Reason: evil},
		{Type: audit.Result, Step: 1, CallID: "c", Tool: "t", Content: evil},
		{Type: audit.Abort, Reason: evil, Tool: evil, Key: evil},
		{Type: audit.Type(evil)},
		{Type: audit.Stop, Stop: "error", Answer: evil, Error: evil}, // a stop reason is typed: no text of its own
	}
	data := writeLogSession(t, testSession, recs)
	for _, o := range []audit.ShowOptions{{}, {Refusals: true}} {
		var out bytes.Buffer
		if err := audit.Show(&out, bytes.NewReader(data), o); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"\x1b", "\x07", "\x00", "\u202e", "\u2066", "\r", "\u009b", "\u2028"} {
			if strings.Contains(out.String(), bad) {
				t.Errorf("refusals %v: the output holds %q:\n%s", o.Refusals, bad, out.String())
			}
		}
		if !strings.Contains(out.String(), `a\x1b]0;pwned\x07b\x1b[2Jc\u202ed\u2066e / f\x00g\u009bh i`) {
			t.Errorf("refusals %v: the escaped text is missing:\n%s", o.Refusals, out.String())
		}
		// One line per record at most, plus the fixed lines.
		if n := strings.Count(out.String(), "\n"); n > 40 {
			t.Errorf("%d lines: a record broke into several", n)
		}
	}
}

// Show shows what it can of a damaged log, and reports cost when a log has it.
func TestShowDamaged(t *testing.T) {
	t.Parallel()
	data := writeLog(t, sessionRecords())
	ls := lines(data)
	damaged := join(ls[0], ls[1], []byte("garbage\n"), ls[2][:40], []byte("\n"), ls[3], ls[4], ls[5])
	var out bytes.Buffer
	if err := audit.Show(&out, bytes.NewReader(damaged), audit.ShowOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"?? line 3: not a record (cut or damaged), skipped\n",
		"?? line 4: not a record (cut or damaged), skipped\n",
		"    ok, 8 bytes, 0.5 ms: a 1 / b 2\n",
		"    REFUSED by availability: send_email is not on this session's allowlist\n",
		"no stop record at the end: the session was interrupted",
		"refusals: availability 1\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}

	out.Reset()
	priced := bytes.Replace(data, []byte(`"usage":{"input":100,"output":10}`), []byte(`"usage":{"input":100,"output":10,"cost_usd":0.25}`), 1)
	priced = bytes.Replace(priced, []byte(`"usage":{"input":200,"output":5}`), []byte(`"usage":{"input":200,"output":5,"cost_usd":0.125}`), 1)
	if err := audit.Show(&out, bytes.NewReader(priced), audit.ShowOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "stop: done after 2 step(s), 2 tool call(s), 315 tokens, $0.3750\n") {
		t.Errorf("no cost in:\n%s", out.String())
	}

	// A session resumed after its stop (a record type this Show may not
	// know): the first stop is not the end.
	out.Reset()
	resumed := writeLogSession(t, testSession, append(sessionRecords(),
		audit.Record{Type: "resume", Reason: "settled 1 call", Step: 3, CallID: "call_1_2", Tool: "send_email", Key: "k1"},
		audit.Record{Type: audit.ModelCall, Step: 3, Tokens: 400, Text: "Once more."}))
	if err := audit.Show(&out, bytes.NewReader(resumed), audit.ShowOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nstop: done after 2 step(s)",
		"\nresume (seq 9): settled 1 call (step 3 call_1_2 send_email, key k1)\nstep 3 |    400 tokens | Once more.\n",
		"\nno stop record at the end",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}

	for _, empty := range []string{"", "\n\n"} {
		out.Reset()
		if err := audit.Show(&out, strings.NewReader(empty), audit.ShowOptions{}); err != nil || !strings.HasSuffix(out.String(), "no records\n") {
			t.Errorf("%q: %q %v", empty, out.String(), err)
		}
	}
}
