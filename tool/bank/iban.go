package bank

import (
	"fmt"
	"strings"
)

// ibanLengths are the IBAN lengths of some countries; an IBAN of another
// country is checked for the general bounds (15 to 34 characters) only.
var ibanLengths = map[string]int{
	"AT": 20, "BE": 16, "CH": 21, "CZ": 24, "DE": 22, "DK": 18, "ES": 24, "FI": 18, "FR": 27,
	"GB": 22, "IE": 22, "IT": 27, "LU": 20, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "SE": 24,
}

// NormalizeIBAN returns an IBAN in its electronic form: upper case, with
// the spaces of its printed form removed. It does not check it.
func NormalizeIBAN(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// CheckIBAN returns nil when s (printed or electronic form) is a valid IBAN:
// two letters of country, two check digits, then letters and digits, of a
// plausible length, whose ISO 13616 check (mod 97) holds. The error says
// what is wrong in words a model can act on.
func CheckIBAN(s string) error {
	iban := NormalizeIBAN(s)
	switch {
	case len(iban) < 15 || len(iban) > 34:
		return fmt.Errorf("%q is not an IBAN: an IBAN has 15 to 34 letters and digits, like DE89 3704 0044 0532 0130 00", s)
	case !isUpper(iban[0]) || !isUpper(iban[1]) || !isDigit(iban[2]) || !isDigit(iban[3]):
		return fmt.Errorf("%q is not an IBAN: it must start with a two-letter country code and two check digits, like DE89", s)
	}
	for i := 4; i < len(iban); i++ {
		if !isUpper(iban[i]) && !isDigit(iban[i]) {
			return fmt.Errorf("%q is not an IBAN: it may hold only letters, digits and spaces", s)
		}
	}
	if n, ok := ibanLengths[iban[:2]]; ok && len(iban) != n {
		return fmt.Errorf("%q is not an IBAN: an IBAN of %s has %d characters, this one %d", s, iban[:2], n, len(iban))
	}
	if mod97(iban[4:]+iban[:4]) != 1 {
		return fmt.Errorf("%q is not a valid IBAN: its check digits do not match (a typo?); use the IBAN exactly as it was given", s)
	}
	return nil
}

// mod97 returns the remainder by 97 of the number s spells, letters read
// as two digits (A = 10 … Z = 35).
func mod97(s string) int {
	r := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
		} else {
			r = (r*100 + int(c-'A'+10)) % 97
		}
	}
	return r
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
