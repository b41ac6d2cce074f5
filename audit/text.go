package audit

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// clip puts s on one line, escapes what a terminal would act on, and cuts
// it to n characters, marking a cut with "…".
func clip(s string, n int) string {
	s = clean(oneLine(s))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// oneLine joins the non-blank lines of s with " / " and folds runs of white
// space into one space.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsSpace) {
		return s
	}
	var lines []string
	for l := range strings.Lines(s) {
		if f := strings.Fields(l); len(f) > 0 {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	return strings.Join(lines, " / ")
}

// clean escapes control characters, bidirectional controls and invalid
// UTF-8, so that text from a log cannot move the cursor, change colours or
// reorder what a reader sees.
func clean(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}
