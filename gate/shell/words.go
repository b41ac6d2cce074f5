package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/gate/cmdline"
)

// dynMark stands for a part of a word only known at run time.
const dynMark = "\x00"

// arg is one word of a command line after quote removal.
type arg struct {
	val  string // the value; for a non-literal word, its literal parts with dynMark for the rest
	raw  string // the word as written, for messages
	lit  bool   // the whole value is known before the command runs
	glob bool   // has unquoted glob characters
	// many says the word stands for many paths found when the command runs:
	// find's {} (val is then the search root) or xargs's input.
	many bool
}

func litArg(s string) arg { return arg{val: s, raw: s, lit: true} }

// source returns the text of n in src, or "" when positions are unusable.
func source(src string, n syntax.Node) string { return cmdline.Source(src, n) }

// args resolves the words of a command, applying brace expansion.
// The words go into the analyzer's arena (word appends nothing to it).
func (a *analyzer) args(ws []*syntax.Word, sc *scope) []arg {
	start := len(a.arena.args)
	for _, w := range ws {
		if !hasUnquotedBrace(w) {
			a.arena.args = append(a.arena.args, a.word(w, sc))
			continue
		}
		a.braceArgs(w, sc)
	}
	return a.keepArgs(start)
}

// braceArgs appends to the arena the words a brace expansion produces.
func (a *analyzer) braceArgs(w *syntax.Word, sc *scope) {
	cp := &syntax.Word{Parts: w.Parts}
	if !syntax.SplitBraces(cp) {
		a.arena.args = append(a.arena.args, a.word(w, sc))
		return
	}
	alts, ok := expandBraces(cp.Parts, maxBraceWords)
	if !ok {
		x := a.word(w, sc)
		x.lit = false
		x.val += dynMark
		a.arena.args = append(a.arena.args, x)
		return
	}
	raw := source(sc.src, w)
	for _, parts := range alts {
		x := a.word(&syntax.Word{Parts: parts}, sc)
		x.raw = raw
		if x.lit && x.val == "" && !quoted(parts) {
			continue // bash drops empty unquoted words: {,curl} x runs curl
		}
		a.arena.args = append(a.arena.args, x)
	}
}

func quoted(parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		}
	}
	return false
}

func hasUnquotedBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// expandBraces returns every word a brace expansion produces, or false
// when there would be more than limit.
func expandBraces(parts []syntax.WordPart, limit int) ([][]syntax.WordPart, bool) {
	res := [][]syntax.WordPart{nil}
	for _, p := range parts {
		be, ok := p.(*syntax.BraceExp)
		if !ok {
			for i := range res {
				res[i] = append(res[i][:len(res[i]):len(res[i])], p)
			}
			continue
		}
		var alts [][]syntax.WordPart
		if be.Sequence {
			seq, ok := braceSeq(be, limit)
			if !ok {
				return nil, false
			}
			alts = seq
		} else {
			for _, e := range be.Elems {
				sub, ok := expandBraces(e.Parts, limit)
				if !ok {
					return nil, false
				}
				alts = append(alts, sub...)
				if len(alts) > limit {
					return nil, false
				}
			}
		}
		if len(res)*len(alts) > limit {
			return nil, false
		}
		next := make([][]syntax.WordPart, 0, len(res)*len(alts))
		for _, r := range res {
			for _, alt := range alts {
				w := make([]syntax.WordPart, 0, len(r)+len(alt))
				w = append(append(w, r...), alt...)
				next = append(next, w)
			}
		}
		res = next
	}
	return res, true
}

// braceSeq expands {a..b[..n]}.
func braceSeq(be *syntax.BraceExp, limit int) ([][]syntax.WordPart, bool) {
	if len(be.Elems) < 2 {
		return nil, false
	}
	from, to := be.Elems[0].Lit(), be.Elems[1].Lit()
	step := int64(1)
	if len(be.Elems) == 3 {
		n, err := strconv.ParseInt(be.Elems[2].Lit(), 10, 64)
		if err != nil {
			return nil, false
		}
		if n < 0 {
			n = -n
		}
		if n != 0 {
			step = n
		}
	}
	var out [][]syntax.WordPart
	emit := func(s string) bool {
		out = append(out, []syntax.WordPart{&syntax.Lit{Value: s}})
		return len(out) <= limit
	}
	x, err1 := strconv.ParseInt(from, 10, 64)
	y, err2 := strconv.ParseInt(to, 10, 64)
	if err1 == nil && err2 == nil {
		if (y-x)/step > int64(limit) || (x-y)/step > int64(limit) {
			return nil, false
		}
		if x <= y {
			for i := x; i <= y; i += step {
				if !emit(strconv.FormatInt(i, 10)) {
					return nil, false
				}
			}
		} else {
			for i := x; i >= y; i -= step {
				if !emit(strconv.FormatInt(i, 10)) {
					return nil, false
				}
			}
		}
		return out, true
	}
	if len(from) == 1 && len(to) == 1 {
		c1, c2 := int64(from[0]), int64(to[0])
		if c1 <= c2 {
			for c := c1; c <= c2; c += step {
				if !emit(string(rune(c))) {
					return nil, false
				}
			}
		} else {
			for c := c1; c >= c2; c -= step {
				if !emit(string(rune(c))) {
					return nil, false
				}
			}
		}
		return out, true
	}
	return nil, false
}

// byteSet is a set of bytes. Checking a word against one is a table
// lookup per byte; strings.ContainsAny, on the path of every word, costs
// more on the short words commands are made of.
type byteSet [256]bool

func makeByteSet(chars string) (t byteSet) {
	for i := 0; i < len(chars); i++ {
		t[chars[i]] = true
	}
	return t
}

// hasByteIn is strings.ContainsAny(s, chars) for a set of ASCII chars.
func hasByteIn(s string, set *byteSet) bool {
	for i := 0; i < len(s); i++ {
		if set[s[i]] {
			return true
		}
	}
	return false
}

var (
	wordSpecial = makeByteSet("\\*?[~") // what a bare literal word needs no unescaping for
	pathish     = makeByteSet("./~")    // what a word must hold to name a path outside the cwd
)

// word resolves one word without brace expansion.
func (a *analyzer) word(w *syntax.Word, sc *scope) arg {
	x := arg{raw: source(sc.src, w), lit: true}
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if !hasByteIn(p.Value, &wordSpecial) {
				x.val = p.Value
				return x
			}
		case *syntax.SglQuoted:
			if !p.Dollar {
				x.val = p.Value
				return x
			}
		}
		if v, glob, ok := plainWord(w.Parts[0]); ok {
			x.val, x.glob = v, glob
			if x.raw == "" {
				x.raw = x.val
			}
			return x
		}
	}
	var b strings.Builder
	for i, p := range w.Parts {
		a.part(&b, &x, p, i == 0, false, sc)
	}
	x.val = b.String()
	if x.raw == "" {
		x.raw = x.val
	}
	return x
}

// plainWord returns the value of a one-part word that needs no builder,
// as part would write it: a literal with glob characters but no escapes
// and no leading ~, or double quotes around one literal. The common words
// of a command line (*.go, "a message") then cost no allocation.
func plainWord(p syntax.WordPart) (val string, glob, ok bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		v := p.Value
		if strings.HasPrefix(v, "~") || strings.IndexByte(v, '\\') >= 0 {
			return "", false, false
		}
		return v, litGlob(v), true
	case *syntax.DblQuoted:
		switch len(p.Parts) {
		case 0:
			return "", false, true
		case 1:
			if l, isLit := p.Parts[0].(*syntax.Lit); isLit {
				return unescapeDQ(l.Value), false, true
			}
		}
	}
	return "", false, false
}

// litGlob reports the unquoted glob characters unescapeLit notes, for a
// literal without backslashes.
func litGlob(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '*', '?':
			return true
		case '[':
			if strings.IndexByte(v[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

func (a *analyzer) part(b *strings.Builder, x *arg, p syntax.WordPart, first, dq bool, sc *scope) {
	switch p := p.(type) {
	case *syntax.Lit:
		v := p.Value
		if dq {
			b.WriteString(unescapeDQ(v))
			return
		}
		if first && strings.HasPrefix(v, "~") {
			end := strings.IndexByte(v, '/')
			if end < 0 {
				end = len(v)
			}
			if end == 1 && a.homeVar != "" {
				b.WriteString(a.homeVar)
				v = v[1:]
			}
		}
		unescapeLit(b, x, v)
	case *syntax.SglQuoted:
		if p.Dollar {
			b.WriteString(ansiC(p.Value))
		} else {
			b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			a.part(b, x, q, false, true, sc)
		}
	case *syntax.ParamExp:
		if v, ok := a.knownParam(p, sc); ok {
			b.WriteString(v)
			return
		}
		x.lit = false
		b.WriteString(dynMark)
	case *syntax.ExtGlob:
		x.glob = true
		b.WriteString(p.Op.String())
		if p.Pattern != nil {
			b.WriteString(p.Pattern.Value)
		}
		b.WriteByte(')')
	case *syntax.BraceExp:
		// Only present after SplitBraces, and expanded before; keep the
		// elements as one unknown value.
		x.lit = false
		b.WriteString(dynMark)
	default: // CmdSubst, ArithmExp, ProcSubst and anything newer
		x.lit = false
		b.WriteString(dynMark)
	}
}

// knownParam returns the value of $HOME and $PWD when they are known.
func (a *analyzer) knownParam(p *syntax.ParamExp, sc *scope) (string, bool) {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.IsSet || p.NestedParam != nil ||
		p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 || len(p.Modifiers) > 0 {
		return "", false
	}
	switch p.Param.Value {
	case "HOME":
		if a.homeVar != "" {
			return a.homeVar, true
		}
	case "PWD":
		if !sc.cwd.unknown && len(sc.cwd.list) == 1 {
			return sc.cwd.list[0], true
		}
	}
	return "", false
}

// unescapeLit removes backslash escapes from an unquoted literal and notes
// unquoted glob characters.
func unescapeLit(b *strings.Builder, x *arg, v string) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '\\':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i])
			}
			continue
		case '*', '?':
			x.glob = true
		case '[':
			if strings.IndexByte(v[i+1:], ']') >= 0 {
				x.glob = true
			}
		}
		b.WriteByte(c)
	}
}

// unescapeDQ removes the backslashes that escape inside double quotes.
func unescapeDQ(v string) string {
	if strings.IndexByte(v, '\\') < 0 {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				i++
				b.WriteByte(v[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// ansiC decodes the escapes of a $'...' string.
func ansiC(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case 'x', 'u', 'U':
			max := 2
			if e == 'u' {
				max = 4
			} else if e == 'U' {
				max = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else if r := rune(n); utf8.ValidRune(r) {
				b.WriteRune(r)
			}
			i = j - 1
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default: // \\ \' \" \? and unknown escapes
			if e != '\\' && e != '\'' && e != '"' && e != '?' {
				b.WriteByte('\\')
			}
			b.WriteByte(e)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// joinRaw renders an argument list for a message.
func joinRaw(argv []arg) string {
	var b strings.Builder
	for i, x := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.raw)
	}
	return b.String()
}

// cmdName returns the name a command word is judged by: its base name,
// lower-cased (some file systems ignore case).
func cmdName(v string) string {
	if i := strings.LastIndexByte(v, '/'); i >= 0 {
		v = v[i+1:]
	}
	return strings.ToLower(v)
}

// family strips version suffixes: python3.12 -> python, pip3 -> pip.
func family(name string) string {
	i := len(name)
	for i > 0 && (name[i-1] >= '0' && name[i-1] <= '9' || name[i-1] == '.' || name[i-1] == '-') {
		i--
	}
	if i == 0 {
		return name
	}
	return name[:i]
}
