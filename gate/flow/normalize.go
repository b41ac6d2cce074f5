package flow

import (
	"html"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// maxRounds is how many layers of percent and HTML encoding are undone.
const maxRounds = 4

// Decode undoes what a value may travel in on its way from a text to an
// argument, so that both compare equal: percent-encoding ('+' read as a
// space), HTML character references (named, decimal and hex), each repeated
// until nothing changes (at most four layers), then Unicode compatibility
// forms (NFKC: full-width letters, ligatures) and case (lower-case). Both
// the ledger's texts and the arguments judged go through it.
func Decode(s string) string {
	for range maxRounds {
		d := html.UnescapeString(percentDecode(s))
		if d == s {
			break
		}
		s = d
	}
	return strings.ToLower(norm.NFKC.String(s))
}

// Compact drops from a decoded text what does not change a value when it
// is copied: whitespace, invisible format characters (zero-width spaces,
// soft hyphens) and the grouping marks '-' and '.', so "DE89 3704-0044.0532"
// and "de8937040044 0532" compact alike. Other punctuation stays: it keeps
// apart what was apart ("key]\n[end" does not hold "keyend").
func Compact(decoded string) string {
	clean := true
	for _, r := range decoded {
		if drop(r) {
			clean = false
			break
		}
	}
	if clean {
		return decoded
	}
	var b strings.Builder
	b.Grow(len(decoded))
	for _, r := range decoded {
		if !drop(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func drop(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '-', '.':
		return true
	}
	if r < 0x80 {
		return r < 0x20 || r == 0x7f
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r)
}

// keep reports whether r is part of a word: a letter, digit or mark.
func keep(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// Tokens calls fn for each token of a decoded text: a maximal run of
// letters, digits, marks and the joiners '.', '-', '_' and '@', with
// leading and trailing joiners trimmed. "Pay x.io, or eve@evil.example!"
// has the tokens "pay", "x.io", "or" and "eve@evil.example".
func Tokens(decoded string, fn func(tok string)) {
	start := -1
	for i, r := range decoded {
		if keep(r) || isJoiner(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			emit(decoded[start:i], fn)
			start = -1
		}
	}
	if start >= 0 {
		emit(decoded[start:], fn)
	}
}

func emit(tok string, fn func(string)) {
	tok = strings.TrimFunc(tok, isJoiner)
	if tok != "" {
		fn(tok)
	}
}

func isJoiner(r rune) bool { return r == '.' || r == '-' || r == '_' || r == '@' }

// percentDecode decodes %XX escapes and reads '+' as a space. An escape
// that is not two hex digits is kept as it is written.
func percentDecode(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b.WriteByte(' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
