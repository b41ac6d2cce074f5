package termsafe_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/termsafe"
)

// Attack: every kind of sequence a terminal acts on comes out as visible
// text, and the legitimate text around it is kept.
func TestEscapes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, in, text, line, visible string
	}{
		{"plain", "go test ./...", "go test ./...", "go test ./...", "go test ./..."},
		{"unicode kept", "café ✓ 日本", "café ✓ 日本", "café ✓ 日本", "café ✓ 日本"},
		{"newline and tab", "a\n\tb", "a\n\tb", `a\n\tb`, `a\n\tb`},
		{"carriage return", "ok\rrm -rf", `ok\rrm -rf`, `ok\rrm -rf`, `ok\rrm -rf`},
		{"OSC 52 clipboard", "x\x1b]52;c;Y3VybA==\x07y", `x\x1b]52;c;Y3VybA==\x07y`, `x\x1b]52;c;Y3VybA==\x07y`, `x\x1b]52;c;Y3VybA==\x07y`},
		{"OSC 8 link with ST", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;http://evil\x1b\click\x1b]8;;\x1b\`, `\x1b]8;;http://evil\x1b\click\x1b]8;;\x1b\`, `\x1b]8;;http://evil\x1b\click\x1b]8;;\x1b\`},
		{"SGR 8 conceal", "\x1b[8mhidden\x1b[0m", `\x1b[8mhidden\x1b[0m`, `\x1b[8mhidden\x1b[0m`, `\x1b[8mhidden\x1b[0m`},
		{"CSI erase", "\x1b[2K\x1b[1A", `\x1b[2K\x1b[1A`, `\x1b[2K\x1b[1A`, `\x1b[2K\x1b[1A`},
		{"DCS APC PM SOS", "\x1bPq\x1b\\\x1b_a\x1b^b\x1bXc", `\x1bPq\x1b\\x1b_a\x1b^b\x1bXc`, `\x1bPq\x1b\\x1b_a\x1b^b\x1bXc`, `\x1bPq\x1b\\x1b_a\x1b^b\x1bXc`},
		{"C1 CSI as a rune", "a\u009b2Jb\u009d0;t\u009c", `a\u009b2Jb\u009d0;t\u009c`, `a\u009b2Jb\u009d0;t\u009c`, `a\u009b2Jb\u009d0;t\u009c`},
		{"C1 as raw bytes", "a\x9b2J\x9d", `a\x9b2J\x9d`, `a\x9b2J\x9d`, `a\x9b2J\x9d`},
		{"DEL and BEL and NUL", "a\x7fb\x07c\x00", `a\x7fb\x07c\x00`, `a\x7fb\x07c\x00`, `a\x7fb\x07c\x00`},
		{"bidi override", "\u202eexe.txt\u202c \u2066x\u2069", `\u202eexe.txt\u202c \u2066x\u2069`, `\u202eexe.txt\u202c \u2066x\u2069`, `\u202eexe.txt\u202c \u2066x\u2069`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`, `a\xffb\xc3`},
		{"line separator", "a\u2028b", `a\u2028b`, `a\u2028b`, `a\u2028b`},
		{"zero width only visible", "rm\u200b -rf", "rm\u200b -rf", "rm\u200b -rf", `rm\u200b -rf`},
		{"blank run", "rm -rf src; #" + strings.Repeat(" ", 3500) + "go test", "rm -rf src; #" + strings.Repeat(" ", 3500) + "go test", "rm -rf src; #" + strings.Repeat(" ", 3500) + "go test", "rm -rf src; #␠×3500go test"},
		{"two spaces stay", "a  b", "a  b", "a  b", "a  b"},
		{"no-break space", "a\u00a0b\u3000c", "a\u00a0b\u3000c", "a\u00a0b\u3000c", `a\u00a0b\u3000c`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := termsafe.Text(c.in); got != c.text {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
			}
			if got := termsafe.Line(c.in); got != c.line {
				t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
			}
			if got := termsafe.Visible(c.in); got != c.visible {
				t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.visible)
			}
		})
	}
}

// check fails when out holds anything a terminal acts on: it must be valid
// UTF-8 without ESC, C0 (but \n and \t when allowed), DEL, C1 or a bidi
// control.
func check(t *testing.T, fn, in, out string, keepNewlines bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s(%q) = %q: not valid UTF-8", fn, in, out)
	}
	for _, r := range out {
		ok := (r >= 0x20 && r < 0x7f) || r > 0x9f
		if keepNewlines && (r == '\n' || r == '\t') {
			ok = true
		}
		if !ok || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
			t.Fatalf("%s(%q) = %q: passes %U", fn, in, out, r)
		}
	}
}

func FuzzSafe(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]52;c;eA==\x07", "\x9b31m", "\u009b", "\u202e", "\xff\xfe", "a\r\nb", "  \t\u200b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check(t, "Text", s, termsafe.Text(s), true)
		check(t, "Line", s, termsafe.Line(s), false)
		v := termsafe.Visible(s)
		check(t, "Visible", s, v, false)
		for _, r := range v {
			if r != ' ' && (unicode.Is(unicode.Cf, r) || unicode.IsSpace(r)) {
				t.Fatalf("Visible(%q) = %q: hides %U", s, v, r)
			}
		}
		if strings.Contains(v, "   ") {
			t.Fatalf("Visible(%q) = %q: a run of blanks", s, v)
		}
		if termsafe.Safe(s) != (termsafe.Text(s) == s) {
			t.Fatalf("Safe(%q) = %v, but Text gives %q", s, termsafe.Safe(s), termsafe.Text(s))
		}
	})
}
