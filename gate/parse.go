package gate

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// parseFast parses the common shape of tool arguments, JSON in ASCII with
// plain escapes, into exactly what json.Unmarshal into an any gives
// (objects as map[string]any, numbers as float64, a repeated key's last
// value). ok is false for anything else — bytes beyond ASCII inside
// strings, \u escapes of surrogates, numbers strconv refuses, nesting past
// maxFastDepth, and every syntax error — and the caller asks encoding/json,
// which decides and handles those. FuzzParseFast checks the agreement.
func parseFast(data []byte) (v any, ok bool) {
	p := fastParser{data: data}
	p.space()
	v, ok = p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(data)
}

// maxFastDepth bounds the nesting parseFast handles itself.
const maxFastDepth = 32

type fastParser struct {
	data []byte
	i    int
}

func (p *fastParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) value(depth int) (any, bool) {
	if p.i >= len(p.data) || depth > maxFastDepth {
		return nil, false
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, ok := p.str()
		return s, ok
	case c == 't':
		return true, p.lit("true")
	case c == 'f':
		return false, p.lit("false")
	case c == 'n':
		return nil, p.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	}
	return nil, false
}

func (p *fastParser) lit(word string) bool {
	if len(p.data)-p.i < len(word) || string(p.data[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

func (p *fastParser) object(depth int) (any, bool) {
	p.i++ // {
	m := make(map[string]any)
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k] = v
		done, ok := p.after('}')
		if !ok {
			return nil, false
		}
		if done {
			return m, true
		}
	}
}

// after reads what follows a member or element: a comma (more follow) or
// the closing byte (done); anything else is not JSON this parser takes.
func (p *fastParser) after(closing byte) (done, ok bool) {
	p.space()
	if p.i >= len(p.data) {
		return false, false
	}
	switch p.data[p.i] {
	case ',':
		p.i++
		p.space()
		return false, true
	case closing:
		p.i++
		return true, true
	}
	return false, false
}

func (p *fastParser) array(depth int) (any, bool) {
	p.i++ // [
	a := []any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		done, ok := p.after(']')
		if !ok {
			return nil, false
		}
		if done {
			return a, true
		}
	}
}

// str reads a string starting at its opening quote.
func (p *fastParser) str() (string, bool) {
	start := p.i + 1
	j := start
	for ; j < len(p.data); j++ {
		c := p.data[j]
		if c == '"' {
			p.i = j + 1
			return string(p.data[start:j]), true
		}
		if c == '\\' {
			break
		}
		if c < 0x20 || c >= utf8.RuneSelf {
			return "", false
		}
	}
	// Escapes: decode from the first one on into a buffer as long as the
	// raw string, which the decoded text never exceeds.
	end := j
	for end < len(p.data) && p.data[end] != '"' {
		if p.data[end] == '\\' {
			end++
		}
		end++
	}
	var buf strings.Builder
	buf.Grow(end - start)
	buf.Write(p.data[start:j])
	for j < len(p.data) {
		c := p.data[j]
		switch {
		case c == '"':
			p.i = j + 1
			return buf.String(), true
		case c < 0x20 || c >= utf8.RuneSelf:
			return "", false
		case c != '\\':
			buf.WriteByte(c)
			j++
			continue
		}
		if j+1 >= len(p.data) {
			return "", false
		}
		switch e := p.data[j+1]; e {
		case '"', '\\', '/':
			buf.WriteByte(e)
		case 'b':
			buf.WriteByte('\b')
		case 'f':
			buf.WriteByte('\f')
		case 'n':
			buf.WriteByte('\n')
		case 'r':
			buf.WriteByte('\r')
		case 't':
			buf.WriteByte('\t')
		case 'u':
			if j+6 > len(p.data) {
				return "", false
			}
			r, ok := hex4(p.data[j+2 : j+6])
			if !ok || utf16.IsSurrogate(r) {
				return "", false
			}
			buf.WriteRune(r)
			j += 6
			continue
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads a JSON number and converts it as encoding/json does.
func (p *fastParser) number() (any, bool) {
	start := p.i
	i := p.i
	if p.data[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(p.data) && '0' <= p.data[i] && p.data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(p.data) && p.data[i] == '0':
		i++
	case digits() == 0:
		return nil, false
	}
	if i < len(p.data) && p.data[i] == '.' {
		i++
		if digits() == 0 {
			return nil, false
		}
	}
	if i < len(p.data) && (p.data[i] == 'e' || p.data[i] == 'E') {
		i++
		if i < len(p.data) && (p.data[i] == '+' || p.data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(p.data[start:i]), 64)
	if err != nil {
		return nil, false
	}
	p.i = i
	return f, true
}
