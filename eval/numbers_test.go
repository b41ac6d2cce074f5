package eval

import (
	"math/big"
	"testing"
)

// The reading rules are tested in internal/numread; these check that eval
// hands its callers the same answers.
func TestNumbersDelegate(t *testing.T) {
	t.Parallel()
	want, err := ParseExpected("1399")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want bool
	}{
		{"1 399 kr", true},
		{"1.399,00", true},
		{"13990", false},
	}
	for _, tt := range tests {
		if got := ContainsNumber(tt.text, want); got != tt.want {
			t.Errorf("ContainsNumber(%q, 1399) = %v, want %v", tt.text, got, tt.want)
		}
	}
	if got := NumbersIn("1.399"); len(got) != 2 || got[0].Cmp(big.NewRat(1399, 1)) != 0 {
		t.Errorf("NumbersIn(1.399) = %v, want 1399 and 1.399", got)
	}
	if _, err := ParseExpected("1,399"); err == nil {
		t.Error("ParseExpected(1,399) accepted a thousands separator")
	}
}
