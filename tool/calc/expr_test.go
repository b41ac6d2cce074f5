package calc

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"unicode/utf8"
)

// rat parses a test value such as "1399", "-5" or "3/10".
func rat(t testing.TB, s string) *big.Rat {
	t.Helper()
	v, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("bad test value %q", s)
	}
	return v
}

func TestEval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expr string
		want       string // exact value, as accepted by big.Rat.SetString
	}{
		{"order total", "3*45 + 2*120 + 12*8 + 4*25 + 2*30 + 50*5 + 6*15 + 1*199 + 3*35 + 2*22 + 20*4", "1399"},
		{"order subtotal", "3*45 + 2*120 + 12*8 + 4*25 + 2*30 + 50*5 + 6*15 + 1*199", "1170"},
		{"single number", "42", "42"},
		{"subtraction is left associative", "10-2-3", "5"},
		{"multiplication before addition", "2*3+4", "10"},
		{"multiplication before addition right", "2+3*4", "14"},
		{"parentheses", "(2+3)*4", "20"},
		{"division is left associative", "8/2/2", "2"},
		{"mixed precedence", "1+2*3-4/2", "5"},
		{"nested parentheses", "((1+2)*(3+4))", "21"},
		{"unary minus", "-3+5", "2"},
		{"unary minus on parentheses", "-(2+3)", "-5"},
		{"unary minus after operator", "2*-3", "-6"},
		{"double unary minus", "--3", "3"},
		{"unary plus", "+3", "3"},
		{"signs mixed", "-+-3", "3"},
		{"decimals exact", "0.1+0.2", "3/10"},
		{"decimal trailing zero", "12.50*2", "25"},
		{"leading point", ".5+.25", "3/4"},
		{"leading zeros", "007", "7"},
		{"one third", "1/3", "1/3"},
		{"fraction", "10/4", "5/2"},
		{"zero divided", "0/5", "0"},
		{"unicode operators", "3×45 − 5 ÷ 5", "134"},
		{"middle dot", "3·4", "12"},
		{"unicode unary minus", "−3", "-3"},
		{"unicode spaces", "\t1\u00a0+\u2009 2\n", "3"},
		{"no spaces", "1+2", "3"},
		{"large exact", "99999999999999999999*99999999999999999999", "9999999999999999999800000000000000000001"},
		{"exact fraction arithmetic", "1/3+1/3+1/3", "1"},
		{"negative result", "2-5", "-3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Eval(tt.expr)
			if err != nil {
				t.Fatalf("Eval(%q) error: %v", tt.expr, err)
			}
			if want := rat(t, tt.want); got.Cmp(want) != 0 {
				t.Errorf("Eval(%q) = %s, want %s", tt.expr, got.RatString(), want.RatString())
			}
		})
	}
}

func TestEvalFormat(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{"0.1+0.2", "0.3"},
		{"1/3", "0.333333333333"},
		{"2/3", "0.666666666667"},
		{"10/4", "2.5"},
		{"3*45 + 2*120 + 12*8 + 4*25 + 2*30 + 50*5 + 6*15 + 1*199 + 3*35 + 2*22 + 20*4", "1399"},
		{"-7/2", "-3.5"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			v, err := Eval(tt.expr)
			if err != nil {
				t.Fatalf("Eval(%q) error: %v", tt.expr, err)
			}
			if got := Format(v); got != tt.want {
				t.Errorf("Format(Eval(%q)) = %q, want %q", tt.expr, got, tt.want)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expr string
		pos        int
		msg        string // substring of the error text, or the full text if it starts with "calc: "
	}{
		{"empty", "", 0, "calc: empty expression: give an arithmetic expression such as 3*45 + 2*120"},
		{"blank", "   ", 0, "calc: empty expression: give an arithmetic expression such as 3*45 + 2*120"},
		{"letters", "abc", 1, `calc: unexpected "a" at position 1: only numbers, + - * / and parentheses are allowed`},
		{"letter after number", "3*45a", 5, `calc: unexpected "a" at position 5: only numbers, + - * / and parentheses are allowed`},
		{"position counts characters", "3×45 − a", 8, `unexpected "a" at position 8`},
		{"trailing operator", "2+", 3, `calc: unexpected end of expression at position 3: expected a number or "("`},
		{"missing close", "(2+3", 1, `calc: missing ")" for "(" at position 1`},
		{"missing inner close", "1+((2+3)", 3, `calc: missing ")" for "(" at position 3`},
		{"extra close", "2+3)", 4, `calc: unexpected ")" at position 4: there is no matching "("`},
		{"empty parentheses", "()", 2, `unexpected ")" at position 2: expected a number or "("`},
		{"division by zero", "1/0", 2, "calc: division by zero at position 2"},
		{"division by zero expression", "1/(2-2)", 2, "calc: division by zero at position 2"},
		{"division by zero later", "1+2*3/0", 6, "calc: division by zero at position 6"},
		{"double star", "2**3", 3, "no ** exponent operator"},
		{"caret", "2^3", 2, `calc: unexpected "^" at position 2: there is no exponent operator; write repeated multiplication such as 2*2*2`},
		{"exponent", "1e5", 2, "exponent notation is not supported"},
		{"code", "os.exit()", 1, `unexpected "o" at position 1`},
		{"comma", "1,5", 2, `calc: unexpected "," at position 2: use "." as the decimal point and no thousands separators`},
		{"percent", "15%", 3, "no percent operator"},
		{"equals", "1+1=", 4, `without "="`},
		{"two numbers", "2 3", 3, "calc: unexpected number at position 3: expected an operator + - * / or the end of the expression"},
		{"implicit multiplication", "2(3)", 2, `unexpected "(" at position 2: expected an operator`},
		{"number in parentheses", "(2 3)", 4, `unexpected number at position 4: expected an operator + - * / or ")"`},
		{"point without digits", "5.", 2, "calc: decimal point at position 2 must be followed by a digit, as in 2.5 or 0.5"},
		{"lone point", ".", 1, "decimal point at position 1"},
		{"two points", "1.2.3", 4, "unexpected number at position 4"},
		{"leading binary operator", "*2", 1, `unexpected "*" at position 1: expected a number or "("`},
		{"invalid UTF-8", "1+\xff", 3, "calc: invalid UTF-8 byte 0xFF at position 3: only numbers, + - * / and parentheses are allowed"},
		{"newline in message quoted", "1+\x00", 3, `unexpected "\x00" at position 3`},
		{"too long", strings.Repeat("1+", 2499) + "11", 0, "calc: expression is 5000 characters long; the limit is 4096"},
		{"too long by characters", strings.Repeat("−", MaxLen+1), 0, "the limit is 4096"},
		{"nesting", strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100), 65, "calc: expression nests deeper than 64 levels of parentheses and signs at position 65; simplify it"},
		{"sign nesting", strings.Repeat("-", 65) + "1", 65, "nests deeper than 64 levels"},
		{"too many digits", strings.Repeat("7", 2000), 1, "calc: number at position 1 has 2000 digits; the limit is 1000"},
		{"too many decimals", "1+0." + strings.Repeat("1", 1000), 3, "has 1001 digits"},
		{"result too large", strings.Repeat(strings.Repeat("9", 900)+"*", 3) + strings.Repeat("9", 900), 2703, "calc: result too large at position 2703: numerators and denominators are limited to 10000 bits (about 3000 digits)"},
		{"denominator too large", "1/" + strings.Repeat(strings.Repeat("9", 900)+"/", 3) + strings.Repeat("9", 900), 2705, "result too large at position 2705"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := Eval(tt.expr)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Eval(%.40q) = %v, %v; want an *Error", tt.expr, v, err)
			}
			if v != nil {
				t.Errorf("Eval(%.40q) returned value %s with error", tt.expr, v.RatString())
			}
			if e.Pos != tt.pos {
				t.Errorf("Eval(%.40q) error position = %d, want %d (%v)", tt.expr, e.Pos, tt.pos, err)
			}
			msg := err.Error()
			if strings.HasPrefix(tt.msg, "calc: ") && msg != tt.msg ||
				!strings.Contains(msg, tt.msg) {
				t.Errorf("Eval(%.40q) error = %q, want %q", tt.expr, msg, tt.msg)
			}
			if strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

// cubeOfNines returns (10^n - 1)^3 in decimal.
func cubeOfNines(n int) string {
	x, _ := new(big.Int).SetString(strings.Repeat("9", n), 10)
	return new(big.Int).Exp(x, big.NewInt(3), nil).String()
}

// TestEvalLimits checks that inputs exactly at each limit are accepted.
func TestEvalLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expr string
		want       string
	}{
		{"max length", strings.Repeat("1+", MaxLen/2-1) + "11", "2058"},
		{"max length in characters", strings.Repeat("\u3000", MaxLen-1) + "1", "1"},
		{"max parentheses", strings.Repeat("(", MaxDepth) + "1" + strings.Repeat(")", MaxDepth), "1"},
		{"max signs", strings.Repeat("-", MaxDepth) + "1", "1"},
		{"max digits", strings.Repeat("1", MaxDigits) + "-" + strings.Repeat("1", MaxDigits), "0"},
		{"max decimals", "0." + strings.Repeat("0", MaxDigits-2) + "1", "1/1" + strings.Repeat("0", MaxDigits-1)},
		{"large result", strings.Repeat(strings.Repeat("9", MaxDigits)+"*", 2) + strings.Repeat("9", MaxDigits), cubeOfNines(MaxDigits)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Eval(tt.expr)
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			if want := rat(t, tt.want); got.Cmp(want) != 0 {
				t.Errorf("Eval = %s, want %s", got.RatString(), want.RatString())
			}
		})
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"1399", "1399"},
		{"-1399", "-1399"},
		{"3/10", "0.3"},
		{"-3/10", "-0.3"},
		{"5/2", "2.5"},
		{"-5/2", "-2.5"},
		{"1/3", "0.333333333333"},
		{"-1/3", "-0.333333333333"},
		{"2/3", "0.666666666667"},
		{"1/8", "0.125"},
		{"1/1000000000000", "0.000000000001"},
		{"1/10000000000000", "0"},
		{"-1/10000000000000", "0"},
		{"1/2000000000000", "0.000000000001"},
		{"-999999999999999/1000000000000000", "-1"},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{"100/3", "33.333333333333"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := Format(rat(t, tt.in)); got != tt.want {
				t.Errorf("Format(%s) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatNil(t *testing.T) {
	t.Parallel()
	if got := Format(nil); got != "<nil>" {
		t.Errorf("Format(nil) = %q, want %q", got, "<nil>")
	}
}

func TestErrorAs(t *testing.T) {
	t.Parallel()
	_, err := Eval("1/0")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Error", err)
	}
	if e.Pos != 2 || e.Msg != "division by zero at position 2" {
		t.Errorf("error = %+v", *e)
	}
	if got, want := e.Error(), "calc: "+e.Msg; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// digitCount counts the decimal digits in a formatted value.
func digitCount(s string) int {
	return len(strings.TrimLeft(strings.Replace(s, ".", "", 1), "-"))
}

func FuzzEval(f *testing.F) {
	for _, s := range []string{
		"3*45 + 2*120 + 12*8 + 4*25 + 2*30 + 50*5 + 6*15 + 1*199 + 3*35 + 2*22 + 20*4",
		"10-2-3", "8/2/2", "(2+3)*4", "-(2+3)", "2*-3", "--3", "0.1+0.2", "1/3", "10/4",
		"3×45 − 5 ÷ 5", "3·4", ".5", "5.", "12.50", "1e5", "2**3", "2^3", "1,5", "os.exit()",
		"", "   ", "(", ")", "((1))", "1/(2-2)", "1+\xff", "\u00a01\u2009+\t2\n",
		strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70),
		strings.Repeat("-", 70) + "1",
		strings.Repeat("9", 1001),
		strings.Repeat(strings.Repeat("9", 900)+"*", 3) + "9",
		"1/" + strings.Repeat("7", 999) + "/" + strings.Repeat("3", 999),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := Eval(expr)
		if err != nil {
			checkError(t, expr, v, err)
			return
		}
		if v == nil {
			t.Fatalf("Eval(%q) = nil, nil", expr)
		}
		checkRoundTrip(t, expr, v)
	})
}

// checkError checks that a failed evaluation returned only a well-formed *Error.
func checkError(t *testing.T, expr string, v *big.Rat, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Eval(%q) error %T %v is not an *Error", expr, err, err)
	}
	if v != nil {
		t.Fatalf("Eval(%q) returned value %s with error %v", expr, v.RatString(), err)
	}
	if n := utf8.RuneCountInString(expr); e.Pos < 0 || e.Pos > n+1 {
		t.Fatalf("Eval(%q) error position %d outside 0..%d", expr, e.Pos, n+1)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "calc: ") || strings.ContainsAny(msg, "\n\r") || !utf8.ValidString(msg) {
		t.Fatalf("Eval(%q) error %q is not one valid line starting with \"calc: \"", expr, msg)
	}
}

// checkRoundTrip checks that Format(v) evaluates back to v (integers) or to
// within the rounding error of Format (other values), unless the formatted
// value has more digits than a literal may have.
func checkRoundTrip(t *testing.T, expr string, v *big.Rat) {
	t.Helper()
	s := Format(v)
	w, err := Eval(s)
	if digitCount(s) > MaxDigits {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Eval(Format(Eval(%q))) with %d digits: error %v, want *Error", expr, digitCount(s), err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Eval(Format(Eval(%q))) = Eval(%q): %v", expr, s, err)
	}
	if v.IsInt() {
		if w.Cmp(v) != 0 {
			t.Fatalf("Eval(%q) = %s, but Eval(Format) = %s", expr, v.RatString(), w.RatString())
		}
		return
	}
	halfUlp := big.NewRat(1, 2_000_000_000_000) // the largest rounding error of Format
	diff := new(big.Rat).Sub(w, v)
	if diff.Abs(diff).Cmp(halfUlp) > 0 {
		t.Fatalf("Format(Eval(%q)) = %q is %s away from %s", expr, s, diff.RatString(), v.RatString())
	}
}
