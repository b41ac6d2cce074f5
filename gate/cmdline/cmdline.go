// Package cmdline parses a shell command line once, with mvdan.cc/sh, into
// the syntax tree every gate reads: the shell analyzer (gate/shell) walks
// the tree, the permission gate reads the analyzer's commands, and the
// data-flow and drift gates read the line's words. gate.Call.Commands holds
// one Line per command argument of a call, parsed on first use.
//
// It judges nothing and runs nothing. A Line's tree is shared by every gate
// of a call and must not be changed.
package cmdline

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// MaxInput is the largest command line parsed, in bytes. A longer one is
// not parsed (Line.Err wraps ErrTooLarge) and the shell gate refuses it.
const MaxInput = 64 << 10

// ErrTooLarge marks a command line over MaxInput bytes.
var ErrTooLarge = errors.New("command line too large to check")

// NewParser returns the parser every command line is read with: bash, as
// the shell that runs them.
func NewParser() *syntax.Parser {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}

// Line is one command line, parsed.
type Line struct {
	Arg  string       // the argument it is the value of
	Src  string       // the text, as the tool receives it
	File *syntax.File // the syntax tree; nil when Err is set
	Err  error        // why it does not parse, or ErrTooLarge

	words     []Word
	wordsDone bool
}

// Parse parses src, the value of the argument arg, with p (nil: a new
// parser). p is used by one goroutine at a time.
func Parse(p *syntax.Parser, arg, src string) Line {
	l := Line{Arg: arg, Src: src}
	if len(src) > MaxInput {
		l.Err = fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(src), MaxInput)
		return l
	}
	if p == nil {
		p = NewParser()
	}
	f, err := p.Parse(strings.NewReader(src), "")
	if err != nil {
		l.Err = err
		return l
	}
	l.File = f
	return l
}

// Word is one word of a command line as the shell sees it once quotes and
// escapes are removed: `c\url`, `'c'url` and `"curl"` are all "curl".
type Word struct {
	// Text is the word's value; the parts only known when it runs
	// (parameters, substitutions, arithmetic) are kept as written.
	Text string
	// Literal says no part of the word is only known at run time.
	Literal bool
}

// Words returns every word of the line, in source order: the words of
// every command (its name, arguments, assignments and redirections),
// those inside substitutions included, and the bodies of here-documents.
// A line that does not parse has no words. The result is computed once
// and shared; it must not be changed.
func (l *Line) Words() []Word {
	if l.wordsDone {
		return l.words
	}
	l.wordsDone = true
	if l.File == nil {
		return nil
	}
	syntax.Walk(l.File, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			l.words = append(l.words, wordOf(l.Src, w))
		}
		return true
	})
	return l.words
}

// wordOf unquotes w, written in src.
func wordOf(src string, w *syntax.Word) Word {
	if lit := w.Lit(); lit != "" && !strings.ContainsRune(lit, '\\') {
		return Word{Text: lit, Literal: true} // the common plain word: no copy
	}
	var b strings.Builder
	literal := parts(&b, src, w.Parts, false)
	return Word{Text: b.String(), Literal: literal}
}

// parts writes the value of word parts to b and reports whether all of it
// is known before the line runs. quoted says they are inside double quotes.
func parts(b *strings.Builder, src string, ps []syntax.WordPart, quoted bool) bool {
	literal := true
	for _, p := range ps {
		switch p := p.(type) {
		case *syntax.Lit:
			unescape(b, p.Value, quoted)
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			if !parts(b, src, p.Parts, true) {
				literal = false
			}
		default: // parameters, substitutions, arithmetic, globs: only known when it runs
			literal = false
			b.WriteString(Source(src, p))
		}
	}
	return literal
}

// unescape writes a literal's value with its backslashes applied: outside
// double quotes a backslash keeps the next character and a backslash-
// newline vanishes; inside them only $ ` " \ and newline are escaped.
func unescape(b *strings.Builder, s string, quoted bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case !quoted || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(c)
		}
	}
}

// ansiC decodes the common escapes of a $'...' string; others are kept as
// written.
func ansiC(s string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'x':
			if v, n := hexVal(s[i+1:], 2); n > 0 {
				b.WriteByte(byte(v))
				i += n
			} else {
				b.WriteString(`\x`)
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

// hexVal reads up to max hex digits from the start of s.
func hexVal(s string, max int) (v, n int) {
	for n < max && n < len(s) {
		c := s[n]
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | int(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return v, n
		}
		n++
	}
	return v, n
}

// Source returns the text of n in src, the command line n was parsed from;
// "" when n is nil or its positions are unusable.
func Source(src string, n syntax.Node) string {
	if n == nil {
		return ""
	}
	start, end := n.Pos(), n.End()
	if !start.IsValid() || !end.IsValid() {
		return ""
	}
	s, e := start.Offset(), end.Offset()
	if s > e || e > uint(len(src)) {
		return ""
	}
	return src[s:e]
}
