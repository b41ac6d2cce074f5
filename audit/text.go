package audit

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/termsafe"
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

// clean makes text from a log safe for the terminal it is read on
// (termsafe.Line): escape sequences, control characters, bidirectional
// controls and invalid UTF-8 are shown escaped, on one line.
func clean(s string) string { return termsafe.Line(s) }
