package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/session"
)

func TestNewID(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 14, 5, 1, 0, time.FixedZone("CET", 3600))
	a, b := session.NewID(at), session.NewID(at)
	if !strings.HasPrefix(a, "20261202T130501Z-") || len(a) != len("20261202T130501Z-")+8 {
		t.Fatalf("id %q: want UTC time then 8 hex digits", a)
	}
	if a == b {
		t.Fatal("two ids at the same instant are equal")
	}
	if err := session.CheckID(a); err != nil {
		t.Fatal(err)
	}
	if session.NewID(at.Add(time.Second)) < a {
		t.Fatal("ids must sort by time")
	}
}

func TestCheckID(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "-x", "a/b", "../a", "a b", "a.jsonl", "é", strings.Repeat("a", 129)} {
		if session.CheckID(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, good := range []string{"a", "Z9", "a-", "20261202T140501Z-3fa9c2d1", strings.Repeat("a", 128)} {
		if err := session.CheckID(good); err != nil {
			t.Errorf("%q refused: %v", good, err)
		}
	}
}
