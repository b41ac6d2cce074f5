package flow

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/tool"
)

// Window is the length, in bytes of compacted text, of the pieces a long
// value is matched by (eight characters of ASCII text).
const Window = 8

// minToken is the shortest short value judged: shorter ones (one or two
// characters) say too little to be traced to a source.
const minToken = 3

// Ledger remembers what entered the context, by trust. Safe for concurrent
// use. Texts are normalized once, when they are recorded, and indexed, so a
// check costs time in the length of the value judged, not of the texts.
//
// What is kept of a text: the windows of its compacted form (every run of
// Window bytes), its tokens, and the numbers written in it. The texts
// themselves are not kept, so a verdict cannot quote them; of a result
// recorded with Read, its labelled values are (FieldFrom).
type Ledger struct {
	mu sync.RWMutex

	sources []string         // untrusted sources, in the order first seen
	srcIdx  map[string]int32 // source -> index in sources

	untrusted side[int32] // window, token, number -> the first source that brought it
	// perSrc is each source's own index (by index in sources), so that a
	// value the task contract binds to a source can be traced to that
	// source even when another one brought it first.
	perSrc  []side[struct{}]
	trusted side[struct{}]
	// trustedText is every trusted text compacted, NUL-separated: a short
	// value the user wrote inside a longer word is still the user's.
	trustedText strings.Builder
	// trustedWords is every trusted text decoded, not compacted,
	// NUL-separated: where a value the user wrote begins and ends (Told).
	trustedWords strings.Builder

	// authored holds the windows the model wrote first (in its arguments,
	// in notes it read back) before any trusted or untrusted text held
	// them; echoed, the windows of untrusted text that one of them had
	// already been when that text first brought it. A link is copied from
	// a tool result only when no window of it is echoed: a result that
	// repeats the model's own words (an error quoting the path it was
	// given, a file it wrote read back) vouches for nothing.
	authored map[uint64]struct{}
	echoed   map[uint64]struct{}

	// reads are the results recorded with Read: which call returned each
	// and its labelled values (fields.go), for the task contract's
	// "from" bindings. Unlike the rest, a field's value is kept.
	reads []read
}

// side is the index of one trust level.
type side[V any] struct {
	windows map[uint64]V
	tokens  map[string]V
	numbers map[string]V // big.Rat.RatString of each reading
}

func newSide[V any]() side[V] {
	return side[V]{windows: map[uint64]V{}, tokens: map[string]V{}, numbers: map[string]V{}}
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{srcIdx: map[string]int32{}, untrusted: newSide[int32](), trusted: newSide[struct{}](),
		authored: map[uint64]struct{}{}, echoed: map[uint64]struct{}{}}
}

// Arguments records the arguments of a call the model made to t (nil when
// the tool is unknown) as the model's own words: every string in them,
// keys included, JSON escapes undone. They are neither trusted nor a
// source; their windows that no text held before can never make a link
// "copied" (see copied). The URLs of a read-only tool's URL arguments are
// left out: the gate judges them itself before the call runs, so a page
// fetched from a URL the model thought of may still be followed by its
// links.
func (l *Ledger) Arguments(t tool.Tool, args json.RawMessage) {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		l.Authored("", string(args))
		return
	}
	var spec tool.Spec
	if t != nil {
		spec = t.Spec()
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) { // in one order: windows span the joins
		v := m[k]
		b.WriteString(k)
		b.WriteByte(0)
		if spec.Effect == tool.ReadOnly && spec.Roles[k] == tool.RoleURL {
			continue
		}
		strs(v, &b)
	}
	l.Authored("", b.String())
}

// strs writes every string and number in v, each followed by a NUL.
func strs(v any, b *strings.Builder) {
	switch v := v.(type) {
	case string:
		b.WriteString(v)
		b.WriteByte(0)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			x := v[k]
			b.WriteString(k)
			b.WriteByte(0)
			strs(x, b)
		}
	case []any:
		for _, x := range v {
			strs(x, b)
		}
	case float64:
		fmt.Fprintf(b, "%v", v)
		b.WriteByte(0)
	}
}

// Authored records text the model wrote itself and now reads back (the
// result of a tool that echoes it: its scratchpad, its todo list). Such text
// is not recorded as untrusted — what it repeats of a tool result was
// recorded when that result came — and never vouches for a link.
func (l *Ledger) Authored(_, text string) {
	c := Compact(Decode(text))
	if len(c) < Window {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i+Window <= len(c); i++ {
		w := window(c, i)
		if _, ok := l.untrusted.windows[w]; ok {
			continue
		}
		if _, ok := l.trusted.windows[w]; ok {
			continue
		}
		l.authored[w] = struct{}{}
	}
}

// Trusted records the user's words: the task, the user's replies.
func (l *Ledger) Trusted(text string) {
	n := index(text, false)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range n.windows {
		l.trusted.windows[w] = struct{}{}
	}
	for _, t := range n.tokens {
		l.trusted.tokens[t] = struct{}{}
	}
	for _, v := range n.numbers {
		l.trusted.numbers[v] = struct{}{}
	}
	l.trustedText.WriteString(n.compact)
	l.trustedText.WriteByte(0)
	l.trustedWords.WriteString(Decode(text))
	l.trustedWords.WriteByte(0)
}

// Told reports whether the user's own words (Trusted) hold v as a whole
// value, so that a value the task gave can be told from one the model
// made up or read: a number (json.Number, float64, or a string that is
// one) when the user wrote a number of that magnitude; a string when it
// occurs in the user's words, compacted as Compact does (an IBAN grouped or
// not), as a whole: no letter or digit joined to it on either side ("6" is
// not told by "2026", nor "anna@x.example" by "joanna@x.example", nor
// "june.txt" by "bill-june.txt"). Anything else is not told.
func (l *Ledger) Told(v any) bool {
	var num *big.Rat
	switch x := v.(type) {
	case json.Number:
		num, _ = new(big.Rat).SetString(x.String())
	case float64:
		num = new(big.Rat).SetFloat64(x)
	case string:
		if n, ok := plainNumber(x); ok {
			num = n
			break
		}
		return l.toldText(x)
	}
	if num == nil {
		return false
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	_, ok := l.trusted.numbers[num.RatString()]
	return ok
}

// toldText is Told for a string that is not a number: its compacted
// form matched against the user's decoded words, skipping there what
// Compact drops, starting and ending at a word's edge.
func (l *Ledger) toldText(s string) bool {
	c := Compact(strings.TrimSpace(Decode(s)))
	if c == "" {
		return false
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	words := l.trustedWords.String()
	for i, r := range words {
		if drop(r) || !edge(words[:i], true) {
			continue
		}
		if end, ok := matchCompact(words, i, c); ok && edge(words[end:], false) {
			return true
		}
	}
	return false
}

// matchCompact matches c against text from byte i on, skipping the runes
// of text that Compact drops, and returns where the match ends.
func matchCompact(text string, i int, c string) (int, bool) {
	for _, want := range c {
		for {
			if i >= len(text) {
				return 0, false
			}
			r, n := utf8.DecodeRuneInString(text[i:])
			if !drop(r) {
				break
			}
			i += n
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if r != want {
			return 0, false
		}
		i += n
	}
	return i, true
}

// edge reports whether a value may begin after rest (before: rest is the
// text before it) or end before rest: no letter or digit touches it there,
// nor a joiner ('.', '-', '_', '@') with a letter or digit beyond it
// ("june.txt" does not end a word of "bill-june.txt", "anna@x" does not
// begin one in "joanna@x").
func edge(rest string, before bool) bool {
	next := func(s string) (rune, int) {
		if before {
			return utf8.DecodeLastRuneInString(s)
		}
		return utf8.DecodeRuneInString(s)
	}
	r, n := next(rest)
	if n == 0 || !joined(r) && !isJoiner(r) {
		return true
	}
	if joined(r) {
		return false
	}
	if before {
		rest = rest[:len(rest)-n]
	} else {
		rest = rest[n:]
	}
	r2, n2 := next(rest)
	return n2 == 0 || !joined(r2)
}

// joined reports whether r would continue a word or number it touches.
func joined(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Untrusted records text from a source the user does not vouch for: a tool
// result (source is the tool's name), an external document.
func (l *Ledger) Untrusted(source, text string) {
	n := index(text, true)
	if len(n.windows) == 0 && len(n.tokens) == 0 && len(n.all) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	src, ok := l.srcIdx[source]
	if !ok {
		src = int32(len(l.sources))
		l.sources = append(l.sources, source)
		l.srcIdx[source] = src
		l.perSrc = append(l.perSrc, newSide[struct{}]())
	}
	own := l.perSrc[src]
	for _, w := range n.windows {
		own.windows[w] = struct{}{}
	}
	for _, t := range n.tokens {
		own.tokens[t] = struct{}{}
	}
	for _, v := range n.all {
		own.numbers[v] = struct{}{} // every number: a "from" binding traces, it does not suspect
	}
	for _, w := range n.windows {
		if _, seen := l.untrusted.windows[w]; !seen {
			l.untrusted.windows[w] = src
			if _, mine := l.authored[w]; mine {
				l.echoed[w] = struct{}{}
			}
		}
	}
	for _, t := range n.tokens {
		if _, seen := l.untrusted.tokens[t]; !seen {
			l.untrusted.tokens[t] = src
		}
	}
	for _, v := range n.numbers {
		if _, seen := l.untrusted.numbers[v]; !seen {
			l.untrusted.numbers[v] = src
		}
	}
}

// Seen reports whether any untrusted text has been recorded: whether
// untrusted data has entered the context.
func (l *Ledger) Seen() bool { return !l.empty() }

// TextFrom reports whether value can be traced to what source returned:
// a value of Window bytes or more (compacted) when every run of Window
// bytes of it occurs in the source's text; a shorter one when each of its
// tokens is a token of the source's text. The task contract's "from"
// bindings are checked with it.
func (l *Ledger) TextFrom(value, source string) bool {
	d := Decode(value)
	c := Compact(d)
	l.mu.RLock()
	defer l.mu.RUnlock()
	i, ok := l.srcIdx[source]
	if !ok || c == "" {
		return false
	}
	own := l.perSrc[i]
	if len(c) >= Window {
		for j := 0; j+Window <= len(c); j++ {
			if _, ok := own.windows[window(c, j)]; !ok {
				return false
			}
		}
		return true
	}
	all, any := true, false
	Tokens(d, func(t string) {
		any = true
		if _, ok := own.tokens[t]; !ok {
			all = false
		}
	})
	return any && all
}

// NumberFrom reports whether a number equal to n is written in what source
// returned, in any context (an id too).
func (l *Ledger) NumberFrom(n *big.Rat, source string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	i, ok := l.srcIdx[source]
	if !ok {
		return false
	}
	_, found := l.perSrc[i].numbers[n.RatString()]
	return found
}

// empty reports whether nothing untrusted was recorded.
func (l *Ledger) empty() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.sources) == 0
}

// indexed is one text, normalized and cut into what the ledger keeps.
type indexed struct {
	compact string
	windows []uint64
	tokens  []string
	numbers []string
	all     []string // every number, whatever its context (numbers holds the amounts)
}

// index cuts a text into what the ledger keeps; context reads its numbers
// with their context (amountsIn), as untrusted text is read.
func index(text string, context bool) indexed {
	d := Decode(text)
	n := indexed{compact: Compact(d)}
	n.windows = make([]uint64, 0, max(len(n.compact)-Window+1, 0))
	for i := 0; i+Window <= len(n.compact); i++ {
		n.windows = append(n.windows, window(n.compact, i))
	}
	Tokens(d, func(t string) {
		if utf8.RuneCountInString(t) >= minToken {
			n.tokens = append(n.tokens, t)
		}
	})
	for _, v := range amountsIn(d, context) {
		n.numbers = append(n.numbers, v.RatString())
	}
	n.all = n.numbers
	if context {
		n.all = nil
		for _, v := range amountsIn(d, false) {
			n.all = append(n.all, v.RatString())
		}
	}
	return n
}

// window packs the Window bytes of s at i into a key.
func window(s string, i int) uint64 {
	_ = s[i+Window-1]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// origin returns the source of the first untrusted-only part of value,
// following the matching rules in the package comment.
func (l *Ledger) origin(value string) (string, bool) {
	return l.originExcept(value, "")
}

// originExcept is origin for a value of Window bytes or more (compacted),
// counting only text from sources other than skip. A shorter value is
// judged as origin judges it, whatever skip is.
func (l *Ledger) originExcept(value, skip string) (string, bool) {
	d := Decode(value)
	c := Compact(d)
	l.mu.RLock()
	defer l.mu.RUnlock()
	if len(c) >= Window {
		for i := 0; i+Window <= len(c); i++ {
			w := window(c, i)
			if src, ok := l.untrusted.windows[w]; ok && (skip == "" || l.sources[src] != skip) {
				if _, mine := l.trusted.windows[w]; !mine {
					return l.sources[src], true
				}
			}
		}
		return "", false
	}
	src, found := "", false
	Tokens(d, func(t string) {
		if found || utf8.RuneCountInString(t) < minToken {
			return
		}
		s, ok := l.untrusted.tokens[t]
		if !ok {
			return
		}
		if _, mine := l.trusted.tokens[t]; mine || strings.Contains(l.trustedText.String(), Compact(t)) {
			return
		}
		src, found = l.sources[s], true
	})
	return src, found
}

// copied reports whether value, compacted, is Window bytes or longer and
// every run of Window bytes of it occurs in untrusted text, none of them
// first written by the model: a link copied whole from a tool result. Text
// assembled from pieces (an attacker's URL with what the agent read
// appended) has runs across the joins that no text holds, or that only a
// tool repeating the model's own words (an echo) holds.
func (l *Ledger) copied(value string) bool {
	c := Compact(Decode(value))
	if len(c) < Window {
		return false
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	for i := 0; i+Window <= len(c); i++ {
		w := window(c, i)
		if _, ok := l.untrusted.windows[w]; !ok {
			return false
		}
		if _, echo := l.echoed[w]; echo {
			return false
		}
	}
	return true
}

// amountOrigin returns the source of an amount read as any of values that
// untrusted text holds and trusted text does not.
func (l *Ledger) amountOrigin(values []*big.Rat) (string, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, v := range values {
		k := v.RatString()
		if src, ok := l.untrusted.numbers[k]; ok {
			if _, mine := l.trusted.numbers[k]; !mine {
				return l.sources[src], true
			}
		}
	}
	return "", false
}
