package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/gate"
)

// ShowOptions says what Show prints.
type ShowOptions struct {
	// Refusals prints only the refused calls, grouped by the gate that
	// refused them, instead of the whole timeline.
	Refusals bool
}

// Widths, in characters, of the texts Show cuts.
const (
	clipText   = 100 // model text, a result's head
	clipArgs   = 120 // a call's arguments
	clipReason = 300 // verdict reasons, errors, the answer
)

// Show prints a log as a timeline people can read: a header with the
// session, task, model and settings; per step the model call with the
// session's tokens so far, each call with its verdict, intent and result;
// aborts; and at the end the stop and the refusals per gate. With
// o.Refusals it prints only the refused calls, grouped by gate.
//
// Show does not check the hash chain (Verify does) and shows what it can of
// a damaged log: a line that is not a record is named and skipped. Text
// from the model and the tools is put on one line, cut, and its control
// and bidirectional-override characters are escaped, so a log cannot
// drive the terminal it is read on. The output depends only on the log.
// The error is only for reading r or writing w.
func Show(w io.Writer, r io.Reader, o ShowOptions) error {
	bw := bufio.NewWriter(w)
	s := &shower{w: bw, o: o, refused: map[string][]Record{}}
	lr := newLineReader(r)
	for n := 1; ; n++ {
		line, _, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errLineTooLong) {
			s.bad(n, fmt.Sprintf("longer than %d MiB, skipped", MaxLine>>20))
			continue
		}
		if err != nil {
			return fmt.Errorf("audit log: read line %d: %w", n, err)
		}
		if Padding(line) {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			s.bad(n, "not a record (cut or damaged), skipped")
			continue
		}
		s.record(rec, lineCost(line))
	}
	s.end()
	return bw.Flush()
}

// shower is the state of one Show.
type shower struct {
	w       io.Writer
	o       ShowOptions
	started bool      // a header was printed
	call    string    // the call whose line was printed last
	first   time.Time // of the first record
	last    time.Time // of the latest record
	ended   bool      // the latest record is a stop
	cost    float64   // summed from model calls, or the stop record's
	costs   bool      // some record had a cost
	refused map[string][]Record
	session string
}

func (s *shower) printf(format string, args ...any) { fmt.Fprintf(s.w, format, args...) }

func (s *shower) bad(n int, what string) {
	if !s.o.Refusals {
		s.printf("?? line %d: %s\n", n, clean(what))
	}
}

func (s *shower) record(r Record, c cost) {
	if s.first.IsZero() {
		s.first = r.Time
	}
	if r.Time.After(s.last) {
		s.last = r.Time
	}
	if s.session == "" {
		s.session = r.Session
	}
	if c.ok {
		s.costs = true
		if r.Type == Stop {
			s.cost = c.usd
		} else {
			s.cost += c.usd
		}
	}
	if r.Type == Verdict && r.Decision.Is(gate.Deny) {
		s.refused[r.Gate] = append(s.refused[r.Gate], r)
	}
	if s.o.Refusals {
		if r.Type == SessionStart {
			s.printf("session %s\ntask    %s\n", clean(r.Session), clip(r.Task, clipReason))
			s.started = true
		}
		return
	}
	if !s.started && r.Type != SessionStart {
		s.printf("session %s (no session_start record)\n\n", clean(r.Session))
		s.started = true
	}
	switch r.Type {
	case SessionStart:
		s.header(r)
	case ModelCall:
		s.call = ""
		if r.Error != "" {
			s.printf("step %d | model call failed: %s\n", r.Step, clip(r.Error, clipReason))
			break
		}
		text := clip(r.Text, clipText)
		if text == "" {
			text = "(no text)"
		}
		s.printf("step %d | %6d tokens | %s\n", r.Step, r.Tokens, clean(text))
	case Verdict:
		if r.CallID == "" {
			s.call = ""
			s.printf("  %s by %s: %s\n", decision(r.Decision, true), clean(r.Gate), clip(r.Reason, clipReason))
			break
		}
		s.callLine(r)
		s.printf("    %s by %s: %s\n", decision(r.Decision, false), clean(r.Gate), clip(r.Reason, clipReason))
	case Intent:
		s.callLine(r)
		s.printf("    intent%s\n", intentDetails(r))
	case Result:
		s.callLine(r)
		s.printf("    %s\n", resultText(r))
	case Abort:
		s.call = ""
		s.printf("abort: %s%s\n", clip(r.Reason, clipReason), callRef(r, "in flight: "))
	case Stop:
		s.call = ""
		s.printf("\nstop: %s after %d step(s), %d tool call(s), %d tokens%s\n",
			clean(string(r.Stop)), r.Steps, r.ToolCalls, r.Tokens, clean(s.costText()))
		if r.Answer != "" {
			s.printf("answer: %s\n", clip(r.Answer, clipReason))
		}
		if r.Error != "" {
			s.printf("why: %s\n", clip(r.Error, clipReason))
		}
	default:
		// A type this Show does not know (a newer rein's): its name and
		// what every record may carry.
		s.call = ""
		s.printf("%s (seq %d)", clip(string(r.Type), clipText), r.Seq)
		if r.Reason != "" {
			s.printf(": %s", clip(r.Reason, clipReason))
		}
		s.printf("%s\n", callRef(r, ""))
	}
	s.ended = r.Type == Stop
}

// callLine prints the line naming a call before its first record.
func (s *shower) callLine(r Record) {
	if r.CallID == s.call {
		return
	}
	s.call = r.CallID
	s.printf("  %s %s\n", clean(r.CallID), callText(r.Tool, r.Args))
}

func (s *shower) costText() string {
	if !s.costs {
		return ""
	}
	return fmt.Sprintf(", $%.4f", s.cost)
}

func (s *shower) end() {
	if s.o.Refusals {
		s.refusals()
		return
	}
	if !s.started {
		s.printf("no records\n")
		return
	}
	if !s.ended {
		s.printf("\nno stop record at the end: the session was interrupted, or its last record was lost\n")
	}
	s.printf("elapsed: %s (first record to last)\n", s.last.Sub(s.first))
	s.printf("refusals: %s\n", clean(s.refusalCounts()))
}

func (s *shower) refusalCounts() string {
	if len(s.refused) == 0 {
		return "none"
	}
	var parts []string
	for _, g := range slices.Sorted(maps.Keys(s.refused)) {
		parts = append(parts, fmt.Sprintf("%s %d", clean(g), len(s.refused[g])))
	}
	return strings.Join(parts, ", ")
}

func (s *shower) refusals() {
	if !s.started && s.session != "" {
		s.printf("session %s (no session_start record)\n", clean(s.session))
	}
	total := 0
	for _, rs := range s.refused {
		total += len(rs)
	}
	if total == 0 {
		s.printf("refusals: none\n")
		return
	}
	s.printf("refusals: %d (%s)\n", total, clean(s.refusalCounts()))
	for _, g := range slices.Sorted(maps.Keys(s.refused)) {
		s.printf("\n%s: %d\n", clean(g), len(s.refused[g]))
		for _, r := range s.refused[g] {
			call := "(every call of the step)"
			if r.Tool != "" {
				call = callText(r.Tool, r.Args)
			}
			s.printf("  step %d  %s\n          %s\n", r.Step, clean(call), clip(r.Reason, clipReason))
		}
	}
}

// startConfig is what a session_start record's config holds.
type startConfig struct {
	Model  string          `json:"model"`
	Tools  []string        `json:"tools"`
	Gates  []string        `json:"gates"`
	Limits json.RawMessage `json:"limits"`
	System string          `json:"system"`
	Meta   struct {
		Workdir string `json:"workdir"`
		Config  struct {
			Permissions struct {
				Mode string `json:"mode"`
			} `json:"permissions"`
		} `json:"config"`
	} `json:"meta"`
}

func (s *shower) header(r Record) {
	s.started = true
	s.printf("session %s\n", clean(r.Session))
	s.printf("started %s\n", r.Time.Format(time.RFC3339Nano))
	s.printf("task    %s\n", clip(r.Task, clipReason))
	var c startConfig
	if len(r.Config) > 0 {
		if err := json.Unmarshal(r.Config, &c); err != nil {
			s.printf("config  unreadable: %s\n", clip(err.Error(), clipReason))
		}
	}
	field := func(name, value string) {
		if value != "" {
			s.printf("%-7s %s\n", clean(name), clean(value))
		}
	}
	field("model", clip(c.Model, clipReason))
	if c.Tools != nil {
		field("tools", orNone(clip(strings.Join(c.Tools, ", "), clipReason)))
	}
	field("mode", clip(c.Meta.Config.Permissions.Mode, clipText))
	field("gates", clip(strings.Join(c.Gates, ", "), clipReason))
	field("limits", limitsText(c.Limits))
	field("workdir", clip(c.Meta.Workdir, clipReason))
	field("system", clip(c.System, clipText))
	s.printf("\n")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// limitsText lists the limits that are set, in the order the log has them.
func limitsText(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	var parts []string
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		val := render(v)
		switch val {
		case "0", "0s", "", "null", "false":
			continue
		}
		parts = append(parts, fmt.Sprintf("%v %s", key, val))
	}
	return clip(strings.Join(parts, ", "), clipReason)
}

// render gives a JSON value as text: a string without its quotes.
func render(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

func decision(d Decision, stopped bool) string {
	switch {
	case d.Is(gate.Allow):
		return "allowed"
	case d.Is(gate.Deny) && stopped:
		return "STOPPED"
	case d.Is(gate.Deny):
		return "REFUSED"
	}
	return clean(d.String())
}

func intentDetails(r Record) string {
	var b strings.Builder
	if !r.Effect.IsZero() {
		b.WriteString(", " + r.Effect.String())
	}
	if r.Key != "" {
		b.WriteString(", key " + clean(r.Key))
	}
	if len(r.Snapshots) > 0 {
		b.WriteString(", snapshots " + clip(strings.Join(r.Snapshots, " "), clipReason))
	}
	if b.Len() == 0 {
		return ""
	}
	return ":" + b.String()[1:]
}

func resultText(r Record) string {
	status := "ok"
	if r.IsError {
		status = "error"
	}
	size := fmt.Sprintf("%d bytes", r.Bytes)
	if r.Truncated {
		size += fmt.Sprintf(" (%d in the log)", len(r.Content))
	}
	return fmt.Sprintf("%s, %s, %s: %s", status, size, ms(r.DurationMS), clip(r.Content, clipText))
}

func ms(d float64) string { return fmt.Sprintf("%g ms", d) }

// callRef names the call a record refers to, in brackets after label.
func callRef(r Record, label string) string {
	if r.Tool == "" && r.CallID == "" {
		return ""
	}
	s := fmt.Sprintf(" (%sstep %d", label, r.Step)
	if r.CallID != "" {
		s += " " + clean(r.CallID)
	}
	s += " " + clean(r.Tool)
	if r.Key != "" {
		s += ", key " + clean(r.Key)
	}
	return s + ")"
}

func callText(tool string, args json.RawMessage) string {
	var b bytes.Buffer
	if len(args) > 0 && json.Compact(&b, args) != nil {
		b.Reset()
		b.Write(args)
	}
	return clip(tool+"("+b.String()+")", clipArgs)
}

// cost is a cost in USD found in a record line.
type cost struct {
	usd float64
	ok  bool
}

// lineCost finds "cost_usd" in a record or in its usage. Record has no
// such field yet; a log from a provider that prices calls may have one.
func lineCost(line []byte) cost {
	if !bytes.Contains(line, []byte(`"cost_usd"`)) {
		return cost{}
	}
	var c struct {
		CostUSD *float64 `json:"cost_usd"`
		Usage   struct {
			CostUSD *float64 `json:"cost_usd"`
		} `json:"usage"`
	}
	if json.Unmarshal(line, &c) != nil {
		return cost{}
	}
	switch {
	case c.CostUSD != nil:
		return cost{*c.CostUSD, true}
	case c.Usage.CostUSD != nil:
		return cost{*c.Usage.CostUSD, true}
	}
	return cost{}
}
