package approve_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/approve"
)

// TestTTYChoose: with a pattern the terminal offers the answers that
// stick, shows exactly what they cover, and reads each key; without one,
// only yes once approves and "s" or "a" are a plain no.
func TestTTYChoose(t *testing.T) {
	t.Parallel()
	sticky := bashReq
	sticky.Pattern = "rm -rf build"
	for _, c := range []struct {
		name    string
		req     approve.Request
		input   string
		want    approve.Answer
		inShown string
	}{
		{"y", sticky, "y\n", approve.Answer{Yes: true, By: "terminal"}, "cover exactly: rm -rf build"},
		{"s", sticky, "s\n", approve.Answer{Yes: true, Scope: approve.Session, Pattern: "rm -rf build", By: "terminal"}, "Yes, for the rest of this session"},
		{"session", sticky, "Session\n", approve.Answer{Yes: true, Scope: approve.Session, Pattern: "rm -rf build", By: "terminal"}, ""},
		{"a", sticky, "a\n", approve.Answer{Yes: true, Scope: approve.Always, Pattern: "rm -rf build", By: "terminal"}, "saved in your config"},
		{"x", sticky, "x\n", approve.Answer{Scope: approve.Session, Pattern: "rm -rf build", By: "terminal"}, "No, for the rest of this session"},
		{"n", sticky, "n\n", approve.Answer{By: "terminal"}, "rein: No"},
		{"enter", sticky, "\n", approve.Answer{By: "terminal"}, ""},
		{"s without a pattern", bashReq, "s\n", approve.Answer{By: "terminal"}, "[y/N]"},
		{"a without a pattern", bashReq, "a\n", approve.Answer{By: "terminal"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.Close() })
			h := &human{pw: pw, input: []string{c.input}}
			tty := approve.Terminal(approve.NewLines(pr), h, true, time.Minute).(approve.Chooser)
			got, err := tty.Choose(t.Context(), c.req)
			if err != nil || got != c.want {
				t.Fatalf("typed %q: %+v, %v; want %+v\n%s", c.input, got, err, c.want, h.String())
			}
			if !strings.Contains(h.String(), c.inShown) {
				t.Fatalf("screen lacks %q:\n%s", c.inShown, h.String())
			}
		})
	}
}

// TestTTYApproveIgnoresPattern: Approve answers for one call only, even
// when the request offers a pattern and the human types "s".
func TestTTYApproveIgnoresPattern(t *testing.T) {
	t.Parallel()
	req := bashReq
	req.Pattern = "rm -rf build"
	got, shown, err := ask(t, req, "s\n", false, time.Minute)
	if err != nil || got {
		t.Fatalf("Approve with %q: %v, %v\n%s", "s", got, err, shown)
	}
}
