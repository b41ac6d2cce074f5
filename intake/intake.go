// Package intake marks where text in the model's context came from, so that
// the model can tell the user's request from data: the task is wrapped as
// <user_input>, each tool result as <tool_result name="…">, and content
// from outside the project (a web page) as <external_document kind="…"
// source="…">. Which wrapper a result gets is decided by its typed source
// (model.Source), which the tool that produced it set; never by the tool's
// name or by what the content says about itself.
//
// Content cannot close its wrapper. Every tag a Wrapper writes carries the
// session's boundary, a random id made once per session (NewBoundary) —
// <tool_result name="read_file" id="…"> … </tool_result id="…"> — which
// content written before the session cannot know; should content hold the
// boundary anyway (the model wrote it out and read it back), it is
// replaced. A blocklist of look-alikes would always miss one; the boundary
// does not depend on one. As defence in depth, anything in content that
// looks like one of the tags is still escaped (its opening bracket becomes
// "&lt;"): it is matched on a skeleton of the text — each character
// NFKC-normalised, look-alikes of the brackets, slashes and the letters of
// the tag names (Cyrillic, Greek, full-width, …) folded to ASCII, zero-width
// and other invisible characters dropped, case ignored.
//
// What it will not do: make the model obey. Wrapping is a hint that helps
// the typical case; the gates are the boundary that holds.
package intake

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/reinhq/rein/model"
)

// tagLike matches, in a skeleton, the start of anything that could be read
// as one of the wrapper tags: "<", optional spaces and slash, the tag name,
// with "_", "-", "." or spaces between its words.
var tagLike = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<\s*/?\s*(user[\s_.:-]*input|tool[\s_.:-]*result|external[\s_.:-]*document|system|instructions?)\b`)
})

// confusables folds look-alikes of the characters that make up a tag to
// them: brackets, slashes, joiners, and the letters of the tag names. NFKC
// has already folded full-width and compatibility forms.
var confusables = map[rune]string{
	// "<"
	'‹': "<", '\u2329': "<", '\u3008': "<", '⟨': "<", '❮': "<", '❰': "<", '⧼': "<", 'ᐸ': "<", '˂': "<",
	'«': "<", '≺': "<", '⊲': "<", '⋖': "<", '⦉': "<", '⦑': "<", '⟪': "<", '《': "<", 'ᐊ': "<",
	'᚜': "<", '⟮': "<", '❬': "<", '❨': "<", '⦓': "<", '⪡': "<", '≪': "<", '⊰': "<", '˱': "<",
	// ">"
	'›': ">", '\u232a': ">", '\u3009': ">", '⟩': ">", '❯': ">", '❱': ">", '⧽': ">", 'ᐳ': ">", '˃': ">",
	'»': ">", '≻': ">", '⊳': ">", '⋗': ">", '⦊': ">", '⦒': ">", '⟫': ">", '》': ">", 'ᐅ': ">",
	// "/"
	'∕': "/", '⁄': "/", '⧸': "/", '╱': "/", '⟋': "/", '\\': "/", '⧵': "/", '∖': "/", '⼃': "/",
	'〳': "/", 'ノ': "/", '丿': "/", '᜵': "/", '\u2cc6': "/", '\u2cc7': "/",
	// joiners
	'‐': "-", '‑': "-", '‒': "-", '–': "-", '—': "-", '―': "-", '−': "-", '⁃': "-", '‗': "_", 'ˍ': "_",
	// letters: Cyrillic
	'а': "a", 'с': "c", 'ԁ': "d", 'е': "e", 'ё': "e", 'һ': "h", 'і': "i", 'ї': "i", 'ј': "j", 'к': "k",
	'ӏ': "l", 'м': "m", 'п': "n", 'о': "o", 'р': "p", 'ԛ': "q", 'г': "r", 'ѕ': "s", 'т': "t", 'ц': "u",
	'ѵ': "v", 'ԝ': "w", 'х': "x", 'у': "y", 'ү': "y",
	'А': "a", 'В': "b", 'С': "c", 'Е': "e", 'Н': "h", 'І': "i", 'Ј': "j", 'К': "k", 'М': "m", 'О': "o",
	'Р': "p", 'Ѕ': "s", 'Т': "t", 'Х': "x", 'У': "y", 'Ү': "y", 'Ԁ': "d", 'Ԛ': "q", 'Ԝ': "w", 'Ӏ': "l",
	// Greek
	'α': "a", 'ϲ': "c", 'ε': "e", 'η': "n", 'ι': "i", 'κ': "k", 'ν': "v", 'ο': "o", 'ρ': "p", 'τ': "t",
	'υ': "u", 'χ': "x", 'γ': "y", 'ϳ': "j", 'μ': "u",
	'Α': "a", 'Β': "b", 'Ϲ': "c", 'Ε': "e", 'Η': "h", 'Ι': "i", 'Κ': "k", 'Μ': "m", 'Ν': "n", 'Ο': "o",
	'Ρ': "p", 'Τ': "t", 'Υ': "y", 'Χ': "x", 'Ζ': "z", 'Ϳ': "j",
	// Armenian, Cherokee, Latin extensions and symbols
	'օ': "o", 'ս': "u", 'ո': "n", 'հ': "h", 'ց': "g", 'ı': "i", 'ɩ': "i", 'ǀ': "l", 'ʟ': "l", 'ɪ': "i",
	'ꜱ': "s", 'ᴛ': "t", 'ᴜ': "u", 'ᴏ': "o", 'ᴇ': "e", 'ʀ': "r", 'ɴ': "n", 'ᴍ': "m", 'ᴄ': "c", 'ᴅ': "d",
	'ᴘ': "p", 'ʏ': "y", 'ᴀ': "a", 'ꭓ': "x", 'Ꮪ': "s", 'Ꭲ': "t", 'Ꭼ': "e", 'Ꮇ': "m", 'Ꮯ': "c", 'Ꭰ': "d",
	'Ꮲ': "p", 'ℓ': "l", '|': "l", '1': "l", '0': "o", 'ł': "l", 'ø': "o", 'ð': "d",
}

// ignorable reports a character that renders as nothing, or only changes
// the one before it: zero-width spaces and joiners, format characters,
// combining marks, variation selectors, controls.
func ignorable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	case r == 'ㅤ' || r == 'ᅟ' || r == 'ᅠ' || r == 'ﾠ':
		return true // Hangul fillers
	}
	return unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me, unicode.Cc, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// skeleton returns the skeleton of s and, for each of its bytes, the
// offset in s of the character it came from.
func skeleton(s string) (string, []int) {
	var b strings.Builder
	b.Grow(len(s))
	at := make([]int, 0, len(s))
	add := func(m string, i int) {
		b.WriteString(m)
		for range len(m) {
			at = append(at, i)
		}
	}
	for i, r := range s {
		if r < utf8.RuneSelf {
			if ignorable(r) {
				continue
			}
			if m, ok := confusables[r]; ok {
				add(m, i)
			} else {
				add(string(unicode.ToLower(r)), i)
			}
			continue
		}
		if ignorable(r) {
			continue
		}
		if m, ok := confusables[r]; ok {
			add(m, i)
			continue
		}
		if unicode.IsSpace(r) {
			add(" ", i)
			continue
		}
		for _, n := range norm.NFKC.String(string(r)) {
			switch m, ok := confusables[n]; {
			case ok:
				add(m, i)
			case ignorable(n):
			case unicode.IsSpace(n):
				add(" ", i)
			default:
				add(string(unicode.ToLower(n)), i)
			}
		}
	}
	return b.String(), at
}

// Escape neutralises wrapper-like tags in content: the character that
// opens each (an ASCII or look-alike "<") becomes "&lt;". Everything else is
// left as it was.
func Escape(content string) string {
	if isPlain(content) {
		return content
	}
	sk, at := skeleton(content)
	ms := tagLike().FindAllStringIndex(sk, -1)
	if len(ms) == 0 {
		return content
	}
	var b strings.Builder
	b.Grow(len(content) + 4*len(ms))
	prev := 0
	for _, m := range ms {
		i := at[m[0]]
		if i < prev {
			continue
		}
		_, size := utf8.DecodeRuneInString(content[i:])
		b.WriteString(content[prev:i])
		b.WriteString("&lt;")
		prev = i + size
	}
	b.WriteString(content[prev:])
	return b.String()
}

// isPlain reports text that cannot hold anything tag-like: ASCII without a
// "<".
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '<' || s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// NewBoundary returns a fresh session boundary: 20 random lower-case
// letters and digits (about 103 bits).
func NewBoundary() (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("intake boundary: %w", err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b), nil
}

// Wrapper wraps what the loop hands the model (agent.Config.Intake), its
// tags carrying Boundary. Make one per session with a boundary from
// NewBoundary, and keep that boundary for the session's life (a resumed
// session must wrap with the same one, so that the conversation it rebuilds
// reads as the original did). The zero Wrapper writes tags without an id:
// then only the escaping holds content in.
type Wrapper struct {
	Boundary string
}

// id is the attribute the wrapper's tags carry, with its leading space.
func (w Wrapper) id() string {
	if w.Boundary == "" {
		return ""
	}
	return fmt.Sprintf(" id=%q", attr(w.Boundary))
}

// content escapes look-alike tags in s and replaces the boundary, should s
// hold it, so that no content can write one of the wrapper's tags.
func (w Wrapper) content(s string) string {
	s = Escape(s)
	if w.Boundary == "" || len(w.Boundary) > len(s) {
		return s
	}
	if i := indexFold(s, w.Boundary); i >= 0 {
		var b strings.Builder
		for i >= 0 {
			b.WriteString(s[:i])
			b.WriteString("[boundary]")
			s = s[i+len(w.Boundary):]
			i = indexFold(s, w.Boundary)
		}
		b.WriteString(s)
		s = b.String()
	}
	return s
}

// indexFold is strings.Index ignoring ASCII case.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// Task wraps the task as the user's input.
func (w Wrapper) Task(s string) string {
	return fmt.Sprintf("<user_input%s>\n%s\n</user_input%s>", w.id(), w.content(s), w.id())
}

// ToolResult wraps a tool's result.
func (w Wrapper) ToolResult(name, s string) string {
	return fmt.Sprintf("<tool_result name=%q%s>\n%s\n</tool_result%s>", attr(name), w.id(), w.content(s), w.id())
}

// External wraps content from outside the project.
func (w Wrapper) External(kind, source, s string) string {
	return fmt.Sprintf("<external_document kind=%q source=%q%s>\n%s\n</external_document%s>",
		attr(kind), attr(source), w.id(), w.content(s), w.id())
}

// Result wraps a tool result by its typed source, which the tool that
// produced it set: a local result as a tool result, a web page as an
// external document (kind "web_page", source its URL) inside the tool
// result. Neither the tool's name nor the content's words choose the
// wrapper: a local tool whose output claims to be a web page is a local
// tool result.
func (w Wrapper) Result(name string, src model.Source, content string) string {
	if src.Kind == model.SourceLocal {
		return w.ToolResult(name, content)
	}
	doc := w.External(src.Kind.String(), src.Location, content)
	return fmt.Sprintf("<tool_result name=%q%s>\n%s\n</tool_result%s>", attr(name), w.id(), doc, w.id())
}

// attr keeps an attribute value on one line and free of quotes.
func attr(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '"' || r == '\n' || r == '\r' || r == '<' || r == '>' {
			return '_'
		}
		return r
	}, s)
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}
