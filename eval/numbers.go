// Package eval runs known tasks with known answers and checks the end state.
//
// A ground-truth check asks whether an agent's final answer contains the
// known correct value. Numbers are compared as people write them, not as
// text: "13990" does not contain 1399, while "1 399 kr", "1,399.00" and
// "1.399,00" all do. The reading rules are internal/numread's (its package
// comment says exactly which texts hold which numbers).
package eval

import (
	"math/big"

	"github.com/reinhq/rein/internal/numread"
)

// NumbersIn returns every value a number written in text could mean, as
// exact rationals. An ambiguous number ("1.399") yields both readings (1399
// and 1.399). Values come in the order the numbers appear in text; a number
// written twice appears twice. Text without ASCII digits yields nil.
func NumbersIn(text string) []*big.Rat { return numread.NumbersIn(text) }

// ContainsNumber reports whether text contains a number that may be read as
// want. A nil want is never contained.
func ContainsNumber(text string, want *big.Rat) bool { return numread.ContainsNumber(text, want) }

// ParseExpected parses the expected answer given by a person or a scenario
// file: plain decimal notation only, like "1399", "1399.50" or "-3" (see
// numread.ParseExpected).
func ParseExpected(s string) (*big.Rat, error) { return numread.ParseExpected(s) }
