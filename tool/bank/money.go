package bank

import (
	"fmt"
	"math/big"
	"strings"
)

// Cents is an amount of money in hundredths of the account's currency.
// Money is never a float in this package.
type Cents int64

// MaxAmount is the largest amount one call may move: 1,000,000.00.
const MaxAmount Cents = 100_000_000

// String renders c with two decimals and no grouping: "1234.50", "-3.05".
func (c Cents) String() string {
	sign, v := "", int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// MarshalJSON renders c as a JSON number with two decimals.
func (c Cents) MarshalJSON() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalJSON reads a JSON number (or a string holding one) with at most
// two decimals, of any sign and size that fits, so scenario files can write
// amounts and balances as people do: 1250.00.
func (c *Cents) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if len(s) > 40 || strings.ContainsAny(s, "eE/") {
		return fmt.Errorf("amount %s is not a plain number: write it like 100 or 99.50", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return fmt.Errorf("amount %s is not a number: write it like 100 or 99.50", s)
	}
	r.Mul(r, big.NewRat(100, 1))
	if !r.IsInt() || !r.Num().IsInt64() {
		return fmt.Errorf("amount %s has more than two decimals or is too large", s)
	}
	*c = Cents(r.Num().Int64())
	return nil
}

// ParseAmount reads an amount written as a plain decimal number ("100",
// "99.5", "1250.00"; no exponent, no grouping): positive, at most two
// decimals, at most MaxAmount. The error says how to write it.
func ParseAmount(s string) (Cents, error) {
	if len(s) > 40 || strings.ContainsAny(s, "eE/") {
		return 0, fmt.Errorf("amount %q is not a plain number: write it like 100 or 99.50", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, fmt.Errorf("amount %q is not a number: write it like 100 or 99.50", s)
	}
	if r.Sign() <= 0 {
		return 0, fmt.Errorf("amount %s must be more than 0", s)
	}
	r.Mul(r, big.NewRat(100, 1))
	if !r.IsInt() {
		return 0, fmt.Errorf("amount %s has more than two decimals: round it to cents, like 99.95", s)
	}
	if !r.Num().IsInt64() || r.Num().Int64() > int64(MaxAmount) {
		return 0, fmt.Errorf("amount %s is more than the most one transfer may move (%s)", s, MaxAmount)
	}
	return Cents(r.Num().Int64()), nil
}
