// Package termsafe makes untrusted text safe to print on a terminal.
//
// Text from a model, a tool, a file name or a server may carry bytes a
// terminal acts on instead of showing: escape sequences (CSI cursor moves
// and SGR colours, OSC 52 clipboard writes and OSC 8 links, DCS, APC, PM,
// SOS strings), C0 and C1 control characters, DEL, bidirectional overrides
// that reorder what the reader sees, and invalid UTF-8 that a terminal may
// decode as C1. termsafe does not delete them: it shows them as visible
// escapes (\x1b, \u009b, \u202e, \xff), so a reader sees that they were
// there and the terminal acts on none of them.
//
// termsafe knows nothing about where text goes; callers pick the function
// for the field: Text keeps newlines and tabs, Line puts everything on one
// line, Visible also shows what a reader cannot see (zero-width and unusual
// spaces, long runs of blanks) for text a human must judge, such as an
// approval prompt.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s with everything a terminal would act on escaped, except
// newline and tab, which keep their meaning. The result is valid UTF-8 and
// holds no control character but \n and \t.
func Text(s string) string { return escape(s, modeText) }

// Line returns s on one line: like Text, and newline, tab and carriage
// return are escaped too (\n, \t, \r).
func Line(s string) string { return escape(s, modeLine) }

// Visible returns s for a human who must judge it exactly: like Line, and
// every invisible character (format characters such as U+200B, spaces other
// than ASCII space) is shown as \uXXXX, and a run of MinRun or more spaces
// as "␠×N", so nothing can hide in blank space.
func Visible(s string) string { return escape(s, modeVisible) }

// MinRun is the shortest run of spaces Visible shows as a count.
const MinRun = 3

type mode uint8

const (
	modeText mode = iota
	modeLine
	modeVisible
)

// Safe reports whether Text would return s unchanged.
func Safe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && unsafeRune(r) {
			return false
		}
	}
	return true
}

func escape(s string, m mode) string {
	if m == modeText && Safe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && m == modeText:
			b.WriteByte('\n')
		case r == '\t' && m == modeText:
			b.WriteByte('\t')
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == ' ' && m == modeVisible:
			j := i
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j-i >= MinRun {
				fmt.Fprintf(&b, "␠×%d", j-i)
			} else {
				b.WriteString(s[i:j])
			}
			n = j - i
		case unsafeRune(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r), m == modeVisible && invisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeRune reports whether a terminal may act on r or reorder text
// around it: C0, DEL, C1, bidirectional controls, line and paragraph
// separators.
func unsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) ||
		unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// invisible reports whether r shows as nothing, or as a blank that is not
// an ASCII space.
func invisible(r rune) bool {
	switch {
	case r == ' ':
		return false
	case unicode.Is(unicode.Cf, r), unicode.IsSpace(r), unicode.Is(unicode.Zs, r):
		return true
	case r == '\u115f', r == '\u1160', r == '\u3164', r == '\uffa0', r == '\u2800': // fillers that render blank
		return true
	case unicode.Is(unicode.Variation_Selector, r), r >= 0xe0000 && r <= 0xe007f: // selectors and tags
		return true
	}
	return false
}
