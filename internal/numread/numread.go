// Package numread reads numbers as people write them in text, as exact
// rationals, so that numbers can be compared as numbers, not text: "13990"
// does not contain 1399, while "1 399 kr", "1,399.00" and "1.399,00" all do.
// The eval package checks answers with it, and the data-flow gate (gate/flow)
// compares amounts with it. It does not read numbers written in words.
//
// # Written numbers
//
// A number starts at an ASCII digit that does not follow another digit. It
// is a lead group of digits, then any number of groups made of a separator
// and exactly three digits (not followed by a fourth), then optionally a
// decimal part: '.' or ',' and one or more digits. Separators are the space,
// the no-break space (U+00A0), the narrow no-break space (U+202F), '.' and
// ','. A separator that is not followed by a group or decimal part is not
// part of the number, so "costs 1399." holds 1399 and "1, 2" holds 1 and 2.
//
// A '-' or '−' (U+2212) right before the first digit makes the number
// negative when the sign starts the text or follows whitespace or '(', so
// "-1399" is negative but "3-1399" holds 3 and 1399.
//
// # Readings
//
// Each number is read in up to two ways, and every valid reading counts:
//
//   - as an integer, where every separator groups thousands;
//   - as a decimal, where the last '.' or ',' is the decimal point and any
//     separator before it groups thousands.
//
// Thousands grouping is valid when the lead group has one to three digits
// and does not start with 0, and all grouping separators are spaces (of any
// of the three kinds) or all are the same one of '.' and ','. A decimal
// point must differ from the grouping separators. Spaces are never a decimal
// point. So "1.399" means 1399 or 1.399, "1.399.000" means only 1399000,
// and "1399.000" means only 1399.
//
// When neither reading is valid, as in "2024 399", only the lead group is
// taken as a number and reading resumes after it, which yields 2024 and 399.
//
// A number with more than 1000 digits is skipped: no answer needs one, and
// exact arithmetic on it would cost time that grows with the square of its
// length.
package numread

import (
	"fmt"
	"math/big"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDigits is the most digits a number may have to be compared.
const maxDigits = 1000

// group is a separator and the digits that follow it.
type group struct {
	sep    rune
	digits string
}

// token is one number as written in text, before it is given a meaning.
type token struct {
	negative bool
	lead     string  // the digits before the first separator
	groups   []group // each a separator and exactly three digits
	decimal  *group  // '.' or ',' and one or more digits; nil when absent
}

// NumbersIn returns every value a number written in text could mean, as
// exact rationals. An ambiguous number ("1.399") yields both readings (1399
// and 1.399). Values come in the order the numbers appear in text; a number
// written twice appears twice. Text without ASCII digits yields nil.
func NumbersIn(text string) []*big.Rat {
	var values []*big.Rat
	for i := 0; i < len(text); {
		if !isDigit(text[i]) {
			i++
			continue
		}
		tok, end := scanToken(text, i)
		if tok.digitCount() > maxDigits {
			i = end
			continue
		}
		readings := tok.readings()
		if len(readings) == 0 {
			tok = token{negative: tok.negative, lead: tok.lead}
			end = i + len(tok.lead)
			readings = tok.readings()
		}
		values = append(values, readings...)
		i = end
	}
	return values
}

// ContainsNumber reports whether text contains a number that may be read as
// want. A nil want is never contained.
func ContainsNumber(text string, want *big.Rat) bool {
	if want == nil {
		return false
	}
	for _, v := range NumbersIn(text) {
		if v.Cmp(want) == 0 {
			return true
		}
	}
	return false
}

// ParseExpected parses the expected answer given by a person or a scenario
// file. It accepts plain decimal notation only: an optional sign ('+', '-'
// or '−'), digits, and optionally '.' followed by more digits, as in "1399",
// "1399.50" or "-3". Surrounding whitespace is ignored. Thousands separators
// ("1,399", "1 399"), a decimal comma, exponents and a bare point (".5",
// "5.") are rejected, so that an expected value is never ambiguous. So is a
// value with more than 1000 digits, which NumbersIn never returns.
func ParseExpected(s string) (*big.Rat, error) {
	body, negative := cutSign(strings.TrimSpace(s))
	whole, fraction, hasPoint := strings.Cut(body, ".")
	if !allDigits(whole) || (hasPoint && !allDigits(fraction)) {
		return nil, fmt.Errorf("expected value %q is not a number: write digits with an optional sign and decimal point, like 1399 or -12.50, without thousands separators", s)
	}
	if n := len(whole) + len(fraction); n > maxDigits {
		return nil, fmt.Errorf("expected value has %d digits: at most %d are supported", n, maxDigits)
	}
	tok := token{negative: negative, lead: whole}
	return tok.value(nil, fraction), nil
}

// scanToken reads the number whose first digit is at text[start] and
// returns it with the index just past its end.
func scanToken(text string, start int) (token, int) {
	i := start + digitRun(text[start:])
	tok := token{negative: signedAt(text, start), lead: text[start:i]}
	for {
		sep, size := separatorAt(text, i)
		if size == 0 {
			break
		}
		j := i + size
		n := digitRun(text[j:])
		if n == 3 {
			tok.groups = append(tok.groups, group{sep: sep, digits: text[j : j+n]})
			i = j + n
			continue
		}
		if n > 0 && isPunct(sep) {
			tok.decimal = &group{sep: sep, digits: text[j : j+n]}
			i = j + n
		}
		break
	}
	return tok, i
}

// digitCount returns how many digits tok has in all.
func (t token) digitCount() int {
	n := len(t.lead) + 3*len(t.groups)
	if t.decimal != nil {
		n += len(t.decimal.digits)
	}
	return n
}

// readings returns the distinct values tok may be read as.
func (t token) readings() []*big.Rat {
	var out []*big.Rat
	if v, ok := t.asInteger(); ok {
		out = append(out, v)
	}
	if v, ok := t.asDecimal(); ok && (len(out) == 0 || out[0].Cmp(v) != 0) {
		out = append(out, v)
	}
	return out
}

// asInteger reads every separator as a thousands separator.
func (t token) asInteger() (*big.Rat, bool) {
	if t.decimal != nil || !validGrouping(t.lead, t.groups, 0) {
		return nil, false
	}
	return t.value(t.groups, ""), true
}

// asDecimal reads the last '.' or ',' as the decimal point and every
// separator before it as a thousands separator.
func (t token) asDecimal() (*big.Rat, bool) {
	groups, point := t.groups, t.decimal
	if point == nil {
		if len(groups) == 0 {
			return nil, false
		}
		last := groups[len(groups)-1]
		if !isPunct(last.sep) {
			return nil, false
		}
		groups, point = groups[:len(groups)-1], &last
	}
	if !validGrouping(t.lead, groups, point.sep) {
		return nil, false
	}
	return t.value(groups, point.digits), true
}

// validGrouping reports whether groups after lead form valid thousands
// grouping that does not use the decimal point.
func validGrouping(lead string, groups []group, point rune) bool {
	if len(groups) == 0 {
		return true
	}
	if len(lead) > 3 || lead[0] == '0' {
		return false
	}
	first := groups[0].sep
	for _, g := range groups {
		if g.sep == point || isPunct(g.sep) != isPunct(first) {
			return false
		}
		if isPunct(g.sep) && g.sep != first {
			return false
		}
	}
	return true
}

// value joins the lead and groups digits, then fraction after the point.
func (t token) value(groups []group, fraction string) *big.Rat {
	var b strings.Builder
	b.WriteString(t.lead)
	for _, g := range groups {
		b.WriteString(g.digits)
	}
	b.WriteString(fraction)
	num, _ := new(big.Int).SetString(b.String(), 10) // only ASCII digits, never empty
	if t.negative {
		num.Neg(num)
	}
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(fraction))), nil)
	return new(big.Rat).SetFrac(num, den)
}

// signedAt reports whether a minus sign that counts stands right before
// text[start].
func signedAt(text string, start int) bool {
	before, ok := strings.CutSuffix(text[:start], "-")
	if !ok {
		before, ok = strings.CutSuffix(text[:start], "\u2212")
	}
	if !ok {
		return false
	}
	if before == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	return r == '(' || unicode.IsSpace(r)
}

// separatorAt returns the separator starting at text[i] and its size in
// bytes, or size 0 when there is none.
func separatorAt(text string, i int) (rune, int) {
	r, size := utf8.DecodeRuneInString(text[i:])
	switch r {
	case ' ', '\u00a0', '\u202f', '.', ',':
		return r, size
	}
	return 0, 0
}

// cutSign removes one leading sign from s and reports whether it was a minus.
func cutSign(s string) (string, bool) {
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		return rest, true
	}
	if rest, ok := strings.CutPrefix(s, "\u2212"); ok {
		return rest, true
	}
	return strings.TrimPrefix(s, "+"), false
}

// digitRun returns the number of ASCII digits at the start of s.
func digitRun(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

func allDigits(s string) bool { return s != "" && digitRun(s) == len(s) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isPunct(sep rune) bool { return sep == '.' || sep == ',' }
