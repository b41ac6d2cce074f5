package tui

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newTestActivity(out *lockedBuffer) *Activity {
	a := NewActivity(out, PlainStyles(), func() int { return 60 }, func() string { return "turn 10 tok" })
	a.every = time.Hour // no tick during the test: the line is drawn by Start
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	calls := 0
	a.now = func() time.Time { calls++; return start.Add(time.Duration(calls-1) * 3 * time.Second) }
	return a
}

func TestActivity(t *testing.T) {
	tests := []struct {
		name  string
		steps func(a *Activity, w func(string))
		want  string
	}{
		{name: "the line shows what runs, for how long, and the status",
			steps: func(a *Activity, w func(string)) { a.Start("thinking") },
			want:  clearLine + "⣾ thinking 3s · turn 10 tok"},
		{name: "output erases the line first",
			steps: func(a *Activity, w func(string)) { a.Start("thinking"); w("step 1\n") },
			want:  clearLine + "⣾ thinking 3s · turn 10 tok" + clearLine + "step 1\n"},
		{name: "not drawn after a question waiting on its line",
			steps: func(a *Activity, w func(string)) { w("Allow? [y/N] "); a.Start("running run_bash") },
			want:  "Allow? [y/N] "},
		{name: "drawn again once the answer's line ended",
			steps: func(a *Activity, w func(string)) { w("Allow? [y/N] "); a.LineStart(); a.Start("running run_bash") },
			want:  "Allow? [y/N] " + clearLine + "⣾ running run_bash 3s · turn 10 tok"},
		{name: "stop erases it, and output after stop is as written",
			steps: func(a *Activity, w func(string)) { a.Start("thinking"); a.Stop(); w("answer\n") },
			want:  clearLine + "⣾ thinking 3s · turn 10 tok" + clearLine + "answer\n"},
		{name: "no line before a start",
			steps: func(a *Activity, w func(string)) { w("header\n") },
			want:  "header\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out lockedBuffer
			a := newTestActivity(&out)
			defer a.Stop()
			ww := a.Writer(&out)
			tt.steps(a, func(s string) {
				if _, err := ww.Write([]byte(s)); err != nil {
					t.Fatal(err)
				}
			})
			if got := out.String(); got != tt.want {
				t.Fatalf("the terminal got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// The line is cut to the terminal's width: it never wraps, or erasing it
// would leave its second row behind.
func TestActivityFitsTheWidth(t *testing.T) {
	var out lockedBuffer
	a := NewActivity(&out, PlainStyles(), func() int { return 30 }, func() string { return strings.Repeat("x", 100) })
	a.every = time.Hour
	a.Start("thinking")
	a.Stop()
	drawn := strings.Split(strings.TrimPrefix(out.String(), clearLine), clearLine)[0]
	if n := len([]rune(drawn)); n >= 30 {
		t.Fatalf("the line is %d columns on a 30-column terminal: %q", n, drawn)
	}
}
