package flow

import (
	"math/big"
	"strings"

	"github.com/reinhq/rein/internal/numread"
)

// Numbers in untrusted text are read with their context and magnitude, so
// that an amount the model computed is not taken for one copied from a
// text that merely contains the same digits: a computed 4.00 is not "from"
// a list whose record 4 is an id. A number in untrusted text counts as a
// possible amount unless it is:
//
//   - an identifier: right after a word or key that names one ("id",
//     "#", "no", "number", "ref", "invoice", "order", "ticket", "page",
//     "line", "row", "step", "version"; a JSON key such as "id": or
//     "tx_id": counts), and written without a decimal part;
//   - part of a date, time or code: joined to a digit across '-', '/' or
//     ':' (2026-05-04, 12:30), or to a letter (an IBAN's "GB29", "v2").
//
// Its magnitude is read as people write it: "1,200.00", "1 200,00" and
// "1200" are one value (internal/numread), and a "k" right after the
// digits multiplies by a thousand ("1.2k" is 1200). Every number of the
// user's own words counts as theirs, whatever its context: trusting more
// of the user's text can only allow more of the user's values.
//
// An attacker writes the context too, so an injection can make its number
// look like an id; what that buys is narrow (a payment of "invoice 250" as
// an amount), and with a task contract in force the amount is bound anyway.

// idWords are the words after which a whole number is an identifier.
var idWords = []string{"id", "#", "no", "nr", "num", "number", "ref", "reference", "invoice", "order", "ticket",
	"page", "line", "row", "step", "version", "item", "record", "index"}

// amountsIn returns the values of the numbers in a decoded text; with
// context, identifiers and parts of dates, times and codes are left out.
func amountsIn(d string, context bool) []*big.Rat {
	var out []*big.Rat
	eachNumber(d, context, func(vs []*big.Rat) { out = append(out, vs...) })
	return out
}

// eachNumber calls fn with the readings of each number written in a
// decoded text, in order; with context, identifiers and parts of dates,
// times and codes are left out.
func eachNumber(d string, context bool, fn func([]*big.Rat)) {
	for i := 0; i < len(d); {
		if !isDigitByte(d[i]) {
			i++
			continue
		}
		end := numberEnd(d, i)
		tok := d[i:end]
		next := i + len(tok)
		// A number right before the digits' end that a letter follows is
		// a code unless the letter is a lone 'k' (thousands).
		kilo := false
		if end < len(d) && (d[end] == 'k') && (end+1 == len(d) || !isAlnumByte(d[end+1])) {
			kilo = true
		}
		skip := false
		if context {
			switch {
			case joinedBefore(d, i) || (!kilo && joinedAfter(d, end)):
				skip = true
			case !strings.ContainsAny(tok, ".,") && afterIDWord(d[:i]):
				skip = true
			}
		}
		if !skip {
			vs := numread.NumbersIn(tok)
			if kilo {
				for j, v := range vs {
					vs[j] = new(big.Rat).Mul(v, big.NewRat(1000, 1))
				}
			}
			if len(vs) > 0 {
				fn(vs)
			}
		}
		i = next
	}
}

// numberEnd returns where the number starting at i ends: digits, and '.'
// ',' or a space between digits (grouping and decimal marks).
func numberEnd(d string, i int) int {
	j := i
	for j < len(d) {
		c := d[j]
		if isDigitByte(c) {
			j++
			continue
		}
		if (c == '.' || c == ',' || c == ' ') && j+1 < len(d) && isDigitByte(d[j+1]) && j > i {
			// a space groups only thousands: "1 200" but not "4 2026"
			if c == ' ' && !(j+4 <= len(d) && allDigitBytes(d[j+1:j+4]) && (j+4 == len(d) || !isDigitByte(d[j+4]))) {
				break
			}
			j++
			continue
		}
		break
	}
	return j
}

// joinedBefore reports whether the number at i continues a date, time or
// code: a letter right before it, or a digit across '-', '/' or ':'.
func joinedBefore(d string, i int) bool {
	if i == 0 {
		return false
	}
	c := d[i-1]
	if isLetterByte(c) {
		return true
	}
	return (c == '-' || c == '/' || c == ':') && i >= 2 && isDigitByte(d[i-2])
}

// joinedAfter is joinedBefore for what follows the number ending at end.
func joinedAfter(d string, end int) bool {
	if end >= len(d) {
		return false
	}
	c := d[end]
	if isLetterByte(c) {
		return true
	}
	return (c == '-' || c == '/' || c == ':') && end+1 < len(d) && isDigitByte(d[end+1])
}

// afterIDWord reports whether the text before a number ends with a word or
// key naming an identifier, separated by at most quotes, ':', '=', '#',
// '.' and spaces.
func afterIDWord(before string) bool {
	t := strings.TrimRight(before, " \t\"':=")
	if strings.HasSuffix(t, "#") {
		return true
	}
	t = strings.TrimRight(t, ". \t\"'")
	j := len(t)
	for j > 0 && (isAlnumByte(t[j-1]) || t[j-1] == '_') {
		j--
	}
	w := t[j:]
	if w == "" {
		return false
	}
	if strings.HasSuffix(w, "_id") || strings.HasSuffix(w, "id") && len(w) <= 4 {
		return true
	}
	for _, id := range idWords {
		if w == id {
			return true
		}
	}
	return false
}

func isDigitByte(c byte) bool  { return '0' <= c && c <= '9' }
func isLetterByte(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnumByte(c byte) bool  { return isDigitByte(c) || isLetterByte(c) }

func allDigitBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigitByte(s[i]) {
			return false
		}
	}
	return s != ""
}
