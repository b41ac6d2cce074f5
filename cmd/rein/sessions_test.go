package main

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/price"
)

// writeLog writes a session's log with recs after its start record.
func writeLog(t *testing.T, dir, id string, start time.Time, st settings, recs ...audit.Record) {
	t.Helper()
	w, err := audit.Create(dir, id, audit.WithClock(func() time.Time { return start }))
	if err != nil {
		t.Fatal(err)
	}
	var cfg recordedStart
	cfg.Meta.Settings = st
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(audit.Record{Type: audit.SessionStart, Task: "Do\nthe thing", Config: raw}); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestListSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	call := audit.Record{Type: audit.ModelCall, Step: 1, Usage: &model.Usage{Input: 1_000_000, Output: 0}, Tokens: 1_000_000}
	writeLog(t, dir, "20260201T100000Z-aaaaaaaa", t0, settings{Workdir: "/p", Price: &price.Price{Input: 3}},
		call, audit.Record{Type: audit.Stop, Stop: "done", Tokens: 1_000_000})
	// Killed after a model call: no stop record.
	writeLog(t, dir, "20260201T110000Z-bbbbbbbb", t0.Add(time.Hour), settings{Workdir: "/q"}, call)

	list, err := listSessions(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("listSessions = %d sessions, want 2", len(list))
	}
	newest, oldest := list[0], list[1]
	if newest.ID != "20260201T110000Z-bbbbbbbb" || newest.Stop != "interrupted" || newest.CostUSD != nil || newest.Workdir != "/q" {
		t.Errorf("newest = %+v; want the interrupted one, without a cost", newest)
	}
	if oldest.Stop != "done" || oldest.CostUSD == nil || *oldest.CostUSD != 3 || oldest.Tokens != 1_000_000 {
		t.Errorf("oldest = %+v; want done, 3 USD (1M input tokens at 3/Mtok)", oldest)
	}
	if got := clipTask(oldest.Task); got != "Do the thing" {
		t.Errorf("clipTask = %q; want one line", got)
	}

	tests := []struct {
		arg, want string
		usage     bool
	}{
		{"20260201T100000Z-aaaaaaaa", "20260201T100000Z-aaaaaaaa", false},
		{"20260201T10", "20260201T100000Z-aaaaaaaa", false},
		{dir + "/x/20260201T110000Z-bbbbbbbb.jsonl", "20260201T110000Z-bbbbbbbb", false},
		{"2026", "", true}, // ambiguous
		{"2027", "", true}, // unknown
		{"", "", true},
	}
	for _, tt := range tests {
		id, _, err := resolveSession(dir, tt.arg)
		var u usageError
		if tt.usage != errors.As(err, &u) || id != tt.want {
			t.Errorf("resolveSession(%q) = %q, %v; want %q (usage error %v)", tt.arg, id, err, tt.want, tt.usage)
		}
	}
}
