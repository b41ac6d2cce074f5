// Package calc is a safe arithmetic evaluator for the calc tool.
//
// It evaluates expressions made of numbers, the four operators + − × ÷,
// unary signs and parentheses, with exact rational arithmetic
// (math/big.Rat): 0.1+0.2 is exactly 3/10 and 1/3 stays 1/3 until it is
// formatted.
//
// It will not do anything else: there are no variables, no functions, no
// exponent operator, no comparisons and no code execution. Expressions come
// from a language model and are treated as hostile input; the evaluator is a
// recursive-descent parser whose work is bounded by MaxLen, MaxDepth,
// MaxDigits and MaxBits.
//
// Grammar (any Unicode space is ignored between tokens):
//
//	expr    = term { ("+" | "-" | "−") term } .
//	term    = unary { ("*" | "×" | "·" | "/" | "÷") unary } .
//	unary   = ("+" | "-" | "−") unary | primary .
//	primary = number | "(" expr ")" .
//	number  = digits [ "." digits ] | "." digits .
//	digits  = ( "0" … "9" ) { "0" … "9" } .
//
// Binary operators have the usual precedence and associate to the left,
// so 10-2-3 is 5 and 8/2/2 is 2. Numbers use ASCII digits and "." as the
// decimal point: "45", "012", "12.50" and ".5" are accepted; "5." (a point
// without digits after it), thousands separators ("1,000") and exponents
// ("1e5") are not. Implicit multiplication ("2(3)") is not supported.
//
// All errors are of type *Error.
package calc

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on the input and on intermediate results.
const (
	// MaxLen is the maximum length of an expression, in characters.
	MaxLen = 4096
	// MaxDepth is the maximum nesting of parentheses and unary signs.
	MaxDepth = 64
	// MaxDigits is the maximum number of digits in one number literal.
	MaxDigits = 1000
	// MaxBits is the maximum size, in bits, of the numerator and of the
	// denominator of any intermediate or final result.
	MaxBits = 10000
)

// allowed is the hint given for characters that are not part of the grammar.
const allowed = "only numbers, + - * / and parentheses are allowed"

// Error describes why an expression was refused.
type Error struct {
	// Pos is the 1-based character position of the offending part of the
	// expression, or 0 when the error concerns the expression as a whole.
	Pos int
	// Msg is the complete description, without the "calc: " prefix. It
	// mentions Pos when there is one, and says what is allowed instead.
	Msg string
}

// Error returns the one-line message "calc: " + e.Msg.
func (e *Error) Error() string { return "calc: " + e.Msg }

func errorf(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Eval evaluates an arithmetic expression exactly.
func Eval(expr string) (*big.Rat, error) {
	if n := utf8.RuneCountInString(expr); n > MaxLen {
		return nil, errorf(0, "expression is %d characters long; the limit is %d", n, MaxLen)
	}
	p := &parser{lx: lexer{src: expr, pos: 1}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == kindEOF {
		return nil, errorf(0, "empty expression: give an arithmetic expression such as 3*45 + 2*120")
	}
	v, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind == kindRParen {
		return nil, errorf(p.tok.pos, `unexpected ")" at position %d: there is no matching "("`, p.tok.pos)
	}
	if p.tok.kind != kindEOF {
		return nil, p.unexpected("an operator + - * / or the end of the expression")
	}
	return v, nil
}

// Format renders a value for the model: an integer without a point
// ("1399"); otherwise a decimal rounded to at most 12 digits after the
// point, with trailing zeros removed ("2.5", "0.333333333333") and a
// leading "-" when negative. A value that rounds to zero is "0".
func Format(v *big.Rat) string {
	if v == nil {
		return "<nil>"
	}
	if v.IsInt() {
		return v.Num().String()
	}
	s := strings.TrimRight(v.FloatString(12), "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// kind is the kind of a token.
type kind int

const (
	kindEOF kind = iota
	kindNum
	kindAdd
	kindSub
	kindMul
	kindDiv
	kindLParen
	kindRParen
)

// token is one lexical element of an expression.
type token struct {
	kind kind
	pos  int      // 1-based character position of the first character
	text string   // the token as written
	num  *big.Rat // the value of a kindNum token
}

// describe names a token for an error message.
func (t token) describe() string {
	switch t.kind {
	case kindEOF:
		return "end of expression"
	case kindNum:
		return "number"
	}
	return strconv.Quote(t.text)
}

// lexer splits an expression into tokens on demand.
type lexer struct {
	src string
	off int // byte offset of the next unread character
	pos int // 1-based character position of src[off]
}

func (l *lexer) peek() (rune, int) { return utf8.DecodeRuneInString(l.src[l.off:]) }

func (l *lexer) skip(size int) {
	l.off += size
	l.pos++
}

func (l *lexer) skipSpace() {
	for l.off < len(l.src) {
		r, size := l.peek()
		if !unicode.IsSpace(r) {
			return
		}
		l.skip(size)
	}
}

// next returns the next token.
func (l *lexer) next() (token, error) {
	l.skipSpace()
	if l.off == len(l.src) {
		return token{kind: kindEOF, pos: l.pos}, nil
	}
	r, size := l.peek()
	if isDigit(r) || r == '.' {
		return l.number()
	}
	k := operator(r)
	if k == kindEOF {
		return token{}, badChar(r, size, l.pos, l.src[l.off])
	}
	t := token{kind: k, pos: l.pos, text: l.src[l.off : l.off+size]}
	l.skip(size)
	return t, nil
}

// operator returns the kind of an operator or parenthesis, or kindEOF.
func operator(r rune) kind {
	switch r {
	case '+':
		return kindAdd
	case '-', '−':
		return kindSub
	case '*', '×', '·':
		return kindMul
	case '/', '÷':
		return kindDiv
	case '(':
		return kindLParen
	case ')':
		return kindRParen
	}
	return kindEOF
}

func isDigit(r rune) bool { return '0' <= r && r <= '9' }

// digits skips a run of ASCII digits and returns its length.
func (l *lexer) digits() int {
	n := 0
	for l.off < len(l.src) && isDigit(rune(l.src[l.off])) {
		l.skip(1)
		n++
	}
	return n
}

// number scans a number literal.
func (l *lexer) number() (token, error) {
	start, pos := l.off, l.pos
	n := l.digits()
	frac := 0
	if l.off < len(l.src) && l.src[l.off] == '.' {
		point := l.pos
		l.skip(1)
		if frac = l.digits(); frac == 0 {
			return token{}, errorf(point, "decimal point at position %d must be followed by a digit, as in 2.5 or 0.5", point)
		}
	}
	if l.off < len(l.src) && (l.src[l.off] == 'e' || l.src[l.off] == 'E') {
		return token{}, errorf(l.pos, "unexpected %q at position %d: exponent notation is not supported; write the number in full", l.src[l.off:l.off+1], l.pos)
	}
	if n+frac > MaxDigits {
		return token{}, errorf(pos, "number at position %d has %d digits; the limit is %d", pos, n+frac, MaxDigits)
	}
	text := l.src[start:l.off]
	return token{kind: kindNum, pos: pos, text: text, num: decimal(text, frac)}, nil
}

// decimal converts a validated literal with frac digits after the point.
func decimal(text string, frac int) *big.Rat {
	mant, _ := new(big.Int).SetString(strings.Replace(text, ".", "", 1), 10)
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(frac)), nil)
	return new(big.Rat).SetFrac(mant, scale)
}

// badChar reports a character that is not part of the grammar; b is its
// first byte.
func badChar(r rune, size, pos int, b byte) *Error {
	if r == utf8.RuneError && size == 1 {
		return errorf(pos, "invalid UTF-8 byte 0x%02X at position %d: %s", b, pos, allowed)
	}
	hint := allowed
	switch r {
	case ',':
		hint = `use "." as the decimal point and no thousands separators`
	case '^':
		hint = "there is no exponent operator; write repeated multiplication such as 2*2*2"
	case '%':
		hint = "there is no percent operator; write 15% of 80 as 15/100*80"
	case '=':
		hint = `give only the expression, without "="`
	}
	return errorf(pos, "unexpected %q at position %d: %s", string(r), pos, hint)
}

// parser is a recursive-descent parser and evaluator with one token of
// lookahead.
type parser struct {
	lx    lexer
	tok   token // the current token
	prev  kind  // the kind of the token before tok
	depth int   // current nesting of parentheses and unary signs
}

func (p *parser) advance() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.prev, p.tok = p.tok.kind, t
	return nil
}

// unexpected reports the current token, saying what was expected instead.
func (p *parser) unexpected(want string) *Error {
	return errorf(p.tok.pos, "unexpected %s at position %d: expected %s", p.tok.describe(), p.tok.pos, want)
}

// enter descends one nesting level for the current token.
func (p *parser) enter() error {
	if p.depth++; p.depth > MaxDepth {
		return errorf(p.tok.pos, "expression nests deeper than %d levels of parentheses and signs at position %d; simplify it", MaxDepth, p.tok.pos)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) expr() (*big.Rat, error) {
	return p.chain(kindAdd, kindSub, p.term)
}

func (p *parser) term() (*big.Rat, error) {
	return p.chain(kindMul, kindDiv, p.unary)
}

// chain parses operand { (op1 | op2) operand }, evaluating left to right.
func (p *parser) chain(op1, op2 kind, operand func() (*big.Rat, error)) (*big.Rat, error) {
	x, err := operand()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == op1 || p.tok.kind == op2 {
		op := p.tok
		if err := p.advance(); err != nil {
			return nil, err
		}
		y, err := operand()
		if err != nil {
			return nil, err
		}
		if x, err = apply(op, x, y); err != nil {
			return nil, err
		}
	}
	return x, nil
}

func (p *parser) unary() (*big.Rat, error) {
	switch p.tok.kind {
	case kindAdd, kindSub:
		return p.signed()
	case kindLParen:
		return p.paren()
	case kindNum:
		x := p.tok.num
		if err := p.advance(); err != nil {
			return nil, err
		}
		return x, nil
	case kindMul:
		if p.prev == kindMul {
			return nil, p.unexpected(`a number or "(" (there is no ** exponent operator; write repeated multiplication such as 2*2*2)`)
		}
	}
	return nil, p.unexpected(`a number or "("`)
}

// signed parses a unary sign and its operand.
func (p *parser) signed() (*big.Rat, error) {
	neg := p.tok.kind == kindSub
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if err := p.advance(); err != nil {
		return nil, err
	}
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	if neg {
		x = new(big.Rat).Neg(x)
	}
	return x, nil
}

// paren parses a parenthesized expression.
func (p *parser) paren() (*big.Rat, error) {
	open := p.tok.pos
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if err := p.advance(); err != nil {
		return nil, err
	}
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind == kindEOF {
		return nil, errorf(open, `missing ")" for "(" at position %d`, open)
	}
	if p.tok.kind != kindRParen {
		return nil, p.unexpected(`an operator + - * / or ")"`)
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	return x, nil
}

// apply evaluates x op y into a new value.
func apply(op token, x, y *big.Rat) (*big.Rat, error) {
	z := new(big.Rat)
	switch op.kind {
	case kindAdd:
		z.Add(x, y)
	case kindSub:
		z.Sub(x, y)
	case kindMul:
		z.Mul(x, y)
	case kindDiv:
		if y.Sign() == 0 {
			return nil, errorf(op.pos, "division by zero at position %d", op.pos)
		}
		z.Quo(x, y)
	}
	if z.Num().BitLen() > MaxBits || z.Denom().BitLen() > MaxBits {
		return nil, errorf(op.pos, "result too large at position %d: numerators and denominators are limited to %d bits (about 3000 digits)", op.pos, MaxBits)
	}
	return z, nil
}
