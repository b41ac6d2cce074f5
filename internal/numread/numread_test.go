package numread

import (
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// rat parses a value written the way big.Rat does, for test tables.
func rat(t testing.TB, s string) *big.Rat {
	t.Helper()
	v, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("bad test value %q", s)
	}
	return v
}

func TestContainsNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		want    []string // numbers that must be found
		notWant []string // numbers that must not be found
	}{
		{"plain", "1399", []string{"1399"}, []string{"139", "399", "13990"}},
		{"space thousands", "1 399", []string{"1399"}, []string{"1", "399", "1.399"}},
		{"no-break space thousands", "1\u00a0399", []string{"1399"}, []string{"1", "399"}},
		{"narrow no-break space thousands", "1\u202f399", []string{"1399"}, []string{"1", "399"}},
		{"ambiguous point", "1.399", []string{"1399", "1.399"}, []string{"1", "399"}},
		{"ambiguous comma", "1,399", []string{"1399", "1.399"}, []string{"1", "399"}},
		{"decimal comma", "1399,00", []string{"1399"}, []string{"139900", "0"}},
		{"decimal point", "1399.00", []string{"1399"}, []string{"139900"}},
		{"comma thousands, point decimal", "1,399.00", []string{"1399"}, []string{"1.399", "139900"}},
		{"point thousands, comma decimal", "1.399,00", []string{"1399"}, []string{"1.399", "139900"}},
		{"space thousands, comma decimal", "1 399,50", []string{"1399.5"}, []string{"1399", "1"}},
		{"space thousands, point decimal", "1 399.000", []string{"1399"}, []string{"1399000"}},
		{"in a sentence", "The purchases cost 1399 kr in total.", []string{"1399"}, []string{"1399.0001"}},
		{"sentence full stop", "The total is 1399.", []string{"1399"}, nil},
		{"extra trailing digit", "13990", []string{"13990"}, []string{"1399"}},
		{"extra leading digit", "11399", []string{"11399"}, []string{"1399"}},
		{"four decimals", "1,3990", []string{"1.399"}, []string{"1399", "13990"}},
		{"point twice is thousands", "1.399.000", []string{"1399000"}, []string{"1399", "1399.000", "1.399"}},
		{"comma twice is thousands", "1,399,000", []string{"1399000"}, []string{"1399", "1.399"}},
		{"long lead is not grouped", "1399.000", []string{"1399"}, []string{"1399000"}},
		{"other number", "1170", []string{"1170"}, []string{"1399"}},
		{"other number in sentence", "the answer is 1170 kr", []string{"1170"}, []string{"1399"}},
		{"negative", "-1399", []string{"-1399"}, []string{"1399"}},
		{"minus sign", "\u22121399", []string{"-1399"}, []string{"1399"}},
		{"negative after space", "change: -5 kr", []string{"-5"}, []string{"5"}},
		{"negative in parentheses", "(-1 399,50)", []string{"-1399.5"}, []string{"1399.5"}},
		{"hyphen between numbers", "3-1399", []string{"3", "1399"}, []string{"-1399"}},
		{"hyphen after letter", "NOK-1399", []string{"1399"}, []string{"-1399"}},
		{"empty", "", nil, []string{"0"}},
		{"no digits", "no numbers here, sorry.", nil, []string{"0"}},
		{"unit after", "1399kr", []string{"1399"}, nil},
		{"currency before", "NOK1399", []string{"1399"}, nil},
		{"list with spaces", "1, 2", []string{"1", "2"}, []string{"1.2", "12"}},
		{"separator then two digits", "1 39", []string{"1", "39"}, []string{"139"}},
		{"group followed by fourth digit", "1 3990", []string{"1", "3990"}, []string{"1399", "13990"}},
		{"millions with spaces", "12 345 678", []string{"12345678"}, []string{"12", "345", "678"}},
		{"european millions", "12.345.678,9", []string{"12345678.9"}, []string{"12345678"}},
		{"us millions", "12,345,678.9", []string{"12345678.9"}, []string{"12345678"}},
		{"mixed punctuation thousands", "1.234,567", []string{"1234.567"}, []string{"1234567"}},
		{"space and punctuation mixed", "1 234.567", []string{"1234.567"}, []string{"1234567"}},
		{"year before grouped-looking number", "In 2024 399 people came", []string{"2024", "399"}, []string{"2024399"}},
		{"no reading falls back to lead", "1234.567,5", []string{"1234", "567.5"}, []string{"1234567.5"}},
		{"leading zero is not grouped", "0.399", []string{"0.399"}, []string{"399"}},
		{"leading zero with space", "0 399", []string{"0", "399"}, []string{"399000"}},
		{"zero", "0", []string{"0"}, nil},
		{"decimal zero", "0,00", []string{"0"}, nil},
		{"long fraction", "3.14159265358979323846", []string{"3.14159265358979323846"}, []string{"3.14159265358979"}},
		{"huge integer", "123456789012345678901234567890", []string{"123456789012345678901234567890"}, nil},
		{"version-like", "1.2.3", []string{"1.2", "3"}, []string{"123", "1.23"}},
		{"tab is not a separator", "1\t399", []string{"1", "399"}, []string{"1399"}},
		{"invalid UTF-8 around", "\xff1399\xfe", []string{"1399"}, nil},
		{"non-ASCII digits ignored", "\u0661\u0662 7", []string{"7"}, []string{"12"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, w := range tt.want {
				if !ContainsNumber(tt.text, rat(t, w)) {
					t.Errorf("ContainsNumber(%q, %s) = false, want true; NumbersIn = %s", tt.text, w, ratStrings(NumbersIn(tt.text)))
				}
			}
			for _, w := range tt.notWant {
				if ContainsNumber(tt.text, rat(t, w)) {
					t.Errorf("ContainsNumber(%q, %s) = true, want false; NumbersIn = %s", tt.text, w, ratStrings(NumbersIn(tt.text)))
				}
			}
		})
	}
}

func TestNumbersIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want string // every value, in order, as big.Rat.RatString joined by spaces
	}{
		{"", ""},
		{"nothing to see", ""},
		{"1399", "1399"},
		{"1.399", "1399 1399/1000"},
		{"1.399.000", "1399000"},
		{"1399.000", "1399"},
		{"1, 2", "1 2"},
		{"3-1399", "3 1399"},
		{"-1399", "-1399"},
		{"0.000", "0"},
		{"The total is 1399. Then 1 399,50 and -7.", "1399 2799/2 -7"},
		{"2024 399", "2024 399"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			if got := ratStrings(NumbersIn(tt.text)); got != tt.want {
				t.Errorf("NumbersIn(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestNumbersInDigitLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		text  string
		found bool
	}{
		{"1000 digits", strings.Repeat("9", 1000), true},
		{"1001 digits", strings.Repeat("9", 1001), false},
		{"1000 digits with decimals", "1," + strings.Repeat("5", 999), true},
		{"1001 digits with decimals", "1," + strings.Repeat("5", 1000), false},
		{"1001 digits in groups", "1" + strings.Repeat(" 999", 333) + ".5", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text := "before 7 " + tt.text + " after 8"
			got := NumbersIn(text)
			if n := len(got); tt.found && n < 3 || !tt.found && n != 2 {
				t.Fatalf("NumbersIn found %d values, want the long number found=%v besides 7 and 8", n, tt.found)
			}
			if got[0].Cmp(big.NewRat(7, 1)) != 0 || got[len(got)-1].Cmp(big.NewRat(8, 1)) != 0 {
				t.Errorf("NumbersIn lost the short numbers around the long one: %s ... %s", got[0].RatString(), got[len(got)-1].RatString())
			}
		})
	}
}

func TestParseExpectedDigitLimit(t *testing.T) {
	t.Parallel()
	if _, err := ParseExpected("1." + strings.Repeat("5", 998)); err != nil {
		t.Errorf("ParseExpected with 999 digits: %v", err)
	}
	_, err := ParseExpected("-" + strings.Repeat("5", 1001))
	if err == nil || !strings.Contains(err.Error(), "has 1001 digits: at most 1000") {
		t.Errorf("ParseExpected with 1001 digits: error %v, want one about the digit limit", err)
	}
}

func TestContainsNumberNil(t *testing.T) {
	t.Parallel()
	if ContainsNumber("1399", nil) {
		t.Error("ContainsNumber with nil want = true, want false")
	}
}

func TestParseExpected(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want string
	}{
		{"1399", "1399"},
		{"1399.50", "1399.5"},
		{"-3", "-3"},
		{"+3", "3"},
		{"\u22123", "-3"},
		{"-12.50", "-12.5"},
		{"0", "0"},
		{"-0", "0"},
		{"0.001", "0.001"},
		{"007", "7"},
		{" 42\n", "42"},
		{"123456789012345678901234567890.5", "123456789012345678901234567890.5"},
	}
	for _, tt := range good {
		t.Run("good "+tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseExpected(tt.in)
			if err != nil {
				t.Fatalf("ParseExpected(%q) error: %v", tt.in, err)
			}
			if want := rat(t, tt.want); got.Cmp(want) != 0 {
				t.Errorf("ParseExpected(%q) = %s, want %s", tt.in, got.RatString(), want.RatString())
			}
		})
	}
	bad := []string{
		"", "   ", "abc", "1,399", "1 399", "1\u00a0399", "1.399.000", "1399,50",
		"12.", ".5", "1e3", "0x10", "--1", "- 1", "+-1", "1_000", "NaN", "Inf",
		"1/2", "1399 kr", "\xff", "\u0661\u0662",
	}
	for _, in := range bad {
		t.Run("bad "+in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseExpected(in)
			if err == nil {
				t.Fatalf("ParseExpected(%q) = %s, want error", in, got.RatString())
			}
			msg := err.Error()
			for _, part := range []string{strconv.Quote(in), "is not a number", "like 1399 or -12.50"} {
				if !strings.Contains(msg, part) {
					t.Errorf("ParseExpected(%q) error %q does not contain %q", in, msg, part)
				}
			}
		})
	}
}

func ratStrings(values []*big.Rat) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = v.RatString()
	}
	return strings.Join(s, " ")
}

func FuzzNumbersIn(f *testing.F) {
	for _, seed := range []string{
		"", "1399", "1 399", "1\u00a0399", "1\u202f399", "1.399", "1,399.00",
		"1.399,00", "1.399.000", "1399.000", "-1399", "\u22121399", "3-1399",
		"(-1 399,50)", "1, 2", "1,3990", "\xff\xfe1\xe2\x88", "\xe2\x88\x921",
		"12.345.678,9", "0.000", "1234.567,5",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		values := NumbersIn(text)
		for i, v := range values {
			if v == nil {
				t.Fatalf("NumbersIn(%q)[%d] is nil", text, i)
			}
		}
		// Checking every value would be quadratic; the first and last will do.
		if len(values) > 0 {
			for _, v := range []*big.Rat{values[0], values[len(values)-1]} {
				if !ContainsNumber(text, v) {
					t.Fatalf("ContainsNumber(%q, %s) = false for a value NumbersIn returned", text, v.RatString())
				}
			}
		}
		if !strings.ContainsAny(text, "0123456789") && len(values) != 0 {
			t.Fatalf("NumbersIn(%q) = %s, want none in text without digits", text, ratStrings(values))
		}
	})
}

// Formatting styles for FuzzFormattedInteger.
const (
	stylePlain = iota
	styleSpace
	styleNoBreakSpace
	styleNarrowNoBreakSpace
	stylePoint
	styleComma
	stylePlainDecimalComma
	stylePlainDecimalPoint
	stylePointDecimalComma
	styleCommaDecimalPoint
	styleSpaceDecimalComma
	styleSpaceDecimalPoint
	styleCount
)

// formatInteger writes n in the given style. It returns the text and
// whether the text is a whole number with no decimal part.
func formatInteger(n int64, style int, unicodeMinus bool) (string, bool) {
	abs := uint64(n)
	if n < 0 {
		abs = -abs
	}
	digits := strconv.FormatUint(abs, 10)
	var body string
	whole := true
	switch style {
	case stylePlain:
		body = digits
	case styleSpace:
		body = groupThousands(digits, " ")
	case styleNoBreakSpace:
		body = groupThousands(digits, "\u00a0")
	case styleNarrowNoBreakSpace:
		body = groupThousands(digits, "\u202f")
	case stylePoint:
		body = groupThousands(digits, ".")
	case styleComma:
		body = groupThousands(digits, ",")
	case stylePlainDecimalComma:
		body, whole = digits+",00", false
	case stylePlainDecimalPoint:
		body, whole = digits+".00", false
	case stylePointDecimalComma:
		body, whole = groupThousands(digits, ".")+",00", false
	case styleCommaDecimalPoint:
		body, whole = groupThousands(digits, ",")+".00", false
	case styleSpaceDecimalComma:
		body, whole = groupThousands(digits, " ")+",00", false
	case styleSpaceDecimalPoint:
		body, whole = groupThousands(digits, " ")+".00", false
	}
	switch {
	case n >= 0:
		return body, whole
	case unicodeMinus:
		return "\u2212" + body, whole
	default:
		return "-" + body, whole
	}
}

// groupThousands inserts sep between groups of three digits from the right.
func groupThousands(digits, sep string) string {
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	return b.String()
}

// wrapNumber places a formatted number in one of a few sentences.
func wrapNumber(number string, wrapper int) string {
	switch wrapper % 5 {
	case 1:
		return "The total is " + number + " kr."
	case 2:
		return "(" + number + ")"
	case 3:
		return number + "kr"
	case 4:
		return "= " + number + "\n"
	}
	return number
}

func FuzzFormattedInteger(f *testing.F) {
	f.Add(int64(1399), uint8(stylePlain))
	f.Add(int64(1399), uint8(styleSpace))
	f.Add(int64(-1399), uint8(stylePoint|0x10))
	f.Add(int64(1234567), uint8(styleCommaDecimalPoint|0x20))
	f.Add(int64(-1000000), uint8(stylePointDecimalComma|0x40))
	f.Add(int64(0), uint8(styleSpaceDecimalComma))
	f.Add(int64(-9223372036854775808), uint8(styleNarrowNoBreakSpace|0x80))
	f.Add(int64(9223372036854775807), uint8(styleComma|0x60))
	f.Fuzz(func(t *testing.T, n int64, style uint8) {
		want := new(big.Rat).SetInt64(n)
		number, whole := formatInteger(n, int(style)%styleCount, style&0x10 != 0)
		wrapper := int(style >> 5)
		text := wrapNumber(number, wrapper)
		if !ContainsNumber(text, want) {
			t.Fatalf("ContainsNumber(%q, %d) = false, want true; NumbersIn = %s", text, n, ratStrings(NumbersIn(text)))
		}
		if !whole || n == 0 {
			return
		}
		longer := wrapNumber(number+"0", wrapper)
		if ContainsNumber(longer, want) {
			t.Fatalf("ContainsNumber(%q, %d) = true, want false; NumbersIn = %s", longer, n, ratStrings(NumbersIn(longer)))
		}
	})
}
