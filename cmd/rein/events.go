package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode"

	"github.com/reinhq/rein/audit"
	eventpkg "github.com/reinhq/rein/audit/event"
)

// The kinds of event `rein run --json` prints, one JSON object per line,
// before the final object: package event's, the one shape rein serve
// streams too.
const (
	eventText     = eventpkg.Text
	eventToolCall = eventpkg.ToolCall
	eventVerdict  = eventpkg.Verdict
	eventResult   = eventpkg.Result
	eventStop     = eventpkg.Stop
)

// event is one line of the --json stream (eventpkg.Event).
type event = eventpkg.Event

// events returns the events an audit record stands for (eventpkg.From).
func events(r audit.Record) []event { return eventpkg.From(r) }

// eventWriter prints the events of each record as JSON lines. Stdout is
// best effort: the audit file is the record.
func eventWriter(w io.Writer) func(audit.Record) {
	enc := json.NewEncoder(safeJSON{w})
	return func(r audit.Record) {
		for _, e := range events(r) {
			_ = enc.Encode(e)
		}
	}
}

// safeJSON writes JSON text with every character a terminal would act on
// that encoding/json leaves raw (DEL, C1 controls, bidirectional controls)
// written as a \uXXXX escape: the same JSON value, safe to read on a
// terminal. Each Write must hold whole characters, as an Encoder's does;
// invalid UTF-8 cannot occur, since encoding/json replaces it.
type safeJSON struct{ w io.Writer }

func (s safeJSON) Write(p []byte) (int, error) {
	if !bytes.ContainsFunc(p, unsafeInJSON) {
		return s.w.Write(p)
	}
	var b bytes.Buffer
	for _, r := range string(p) {
		if unsafeInJSON(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	if _, err := s.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

func unsafeInJSON(r rune) bool {
	return (r >= 0x7f && r <= 0x9f) || unicode.Is(unicode.Bidi_Control, r)
}
