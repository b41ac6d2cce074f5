package mcp

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/reinhq/rein/intake"
	"github.com/reinhq/rein/secret"
)

// FindingKind is what the scan of a tool's definition found.
type FindingKind uint8

// The kinds of injection markers the scan looks for.
const (
	// FindInvisible is a character that renders as nothing or reorders
	// text (zero-width, bidi controls, Unicode tags, other format
	// characters): text the user reading the description cannot see.
	FindInvisible FindingKind = iota + 1
	// FindImperative is an instruction addressed to the model (ignore
	// previous instructions, do not tell the user, before using this
	// tool call …).
	FindImperative
	// FindToolReference names another server's tool or a built-in tool:
	// a definition that steers the model towards other tools.
	FindToolReference
	// FindCredentialPath names a file or directory that holds credentials
	// (~/.ssh, .env, .aws/credentials …).
	FindCredentialPath
	// FindWrapperTag writes something that looks like rein's own
	// wrapper tags (<user_input>, <tool_result>, <system>).
	FindWrapperTag
)

func (k FindingKind) String() string {
	switch k {
	case FindInvisible:
		return "invisible-unicode"
	case FindImperative:
		return "imperative"
	case FindToolReference:
		return "tool-reference"
	case FindCredentialPath:
		return "credential-path"
	case FindWrapperTag:
		return "wrapper-tag"
	}
	return fmt.Sprintf("finding(%d)", uint8(k))
}

// MarshalText renders the kind by name.
func (k FindingKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Finding is one injection marker in a tool's definition.
type Finding struct {
	Kind FindingKind `json:"kind"`
	// Where is the part of the definition: "description", "title" or a
	// path into the input schema.
	Where string `json:"where"`
	// Excerpt is what matched, with invisible characters shown as \u escapes.
	Excerpt string `json:"excerpt"`
}

func (f Finding) String() string { return fmt.Sprintf("%s in %s: %q", f.Kind, f.Where, f.Excerpt) }

// imperatives are phrasings that address the model rather than describe
// the tool, matched on the lower-cased, NFKC-folded text with invisible
// characters dropped. Compiled when the first server's tools are judged,
// not at every start of rein.
var imperatives = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+|your\s+)?(previous|prior|above|earlier|other|system|original)\b`),
		regexp.MustCompile(`\b(do\s+not|don't|dont|never)\s+(tell|inform|mention|alert|notify|show|reveal|disclose)\b[^.]{0,40}\b(user|human|anyone)\b`),
		regexp.MustCompile(`\b(before|after|instead\s+of)\s+(using|calling|running|invoking)\s+(this|any|the|another|other|that)\b`),
		regexp.MustCompile(`\byou\s+(must|should|need\s+to|have\s+to|are\s+required\s+to|will)\s+(first\s+|always\s+|also\s+|now\s+)?(call|invoke|run|read|send|forward|upload|fetch|execute)\b`),
		regexp.MustCompile(`\b(always|first)\s+(call|invoke|run|read|send|forward|upload|execute)\b`),
		regexp.MustCompile(`\bsystem\s+prompt\b|\bnew\s+instructions?\b|\byour\s+instructions\b`),
		regexp.MustCompile(`<\s*/?\s*(important|instructions?|secret|hidden|system|admin)\s*>`),
		regexp.MustCompile(`\b(dear|hey)\s+(ai|assistant|model|agent|llm|claude|gpt)\b|\b(ai|assistant|model|agent|llm)\s*,\s*(you|please)\b`),
	}
})

// invisible reports a character a reader of the text cannot see.
func invisible(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return true
	case r == 'ㅤ' || r == 'ᅟ' || r == 'ᅠ' || r == 'ﾠ' || r == '\u2800':
		return true // Hangul fillers, the blank Braille pattern
	}
	return unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// visible shows invisible characters as \u escapes.
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		if invisible(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// scanner finds injection markers; refs are the names a definition may not
// mention: every other server's tools and the built-in tools.
type scanner struct {
	refs *regexp.Regexp  // nil when there are none
	set  map[string]bool // the same names, lower-cased
}

func newScanner(refs []string) scanner {
	var alts []string
	for _, r := range slices.Compact(slices.Sorted(slices.Values(refs))) {
		if r != "" {
			alts = append(alts, regexp.QuoteMeta(strings.ToLower(r)))
		}
	}
	if len(alts) == 0 {
		return scanner{}
	}
	set := make(map[string]bool, len(refs))
	for _, r := range refs {
		set[strings.ToLower(r)] = true
	}
	// Word-bounded, "_" being a word character: read_file matches in
	// "call read_file" but not in "my_read_files".
	return scanner{refs: regexp.MustCompile(`\b(` + strings.Join(alts, "|") + `)\b`), set: set}
}

// word reports whether text is one ASCII word ([A-Za-z0-9_]+): most texts
// of a schema are (property names, "type", "string", "object").
func word(text string) bool {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return text != ""
}

// text scans one text of a definition.
func (s scanner) text(where, text string) []Finding {
	if word(text) {
		// No invisible character, space, '<', ',', '/', '.' or '~': no
		// imperative, credential path or tag can match, and a name can
		// match word-bounded only as the whole text.
		if s.set[strings.ToLower(text)] {
			return []Finding{{FindToolReference, where, strings.ToLower(text)}}
		}
		return nil
	}
	return s.full(where, text)
}

// full is text without the shortcut for a single word.
func (s scanner) full(where, text string) []Finding {
	var out []Finding
	for _, r := range text {
		if invisible(r) {
			out = append(out, Finding{FindInvisible, where, excerpt(text, strings.IndexRune(text, r), 1)})
			break
		}
	}
	folded := strings.ToLower(norm.NFKC.String(strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, text)))
	for _, re := range imperatives() {
		if m := re.FindStringIndex(folded); m != nil {
			out = append(out, Finding{FindImperative, where, folded[m[0]:m[1]]})
			break
		}
	}
	if s.refs != nil {
		if m := s.refs.FindString(folded); m != "" {
			out = append(out, Finding{FindToolReference, where, m})
		}
	}
	if p := credentialPath(folded); p != "" {
		out = append(out, Finding{FindCredentialPath, where, p})
	}
	if intake.Escape(text) != text {
		out = append(out, Finding{FindWrapperTag, where, excerpt(text, strings.IndexByte(text, '<'), 20)})
	}
	return out
}

// credentialPath returns the first path-like word of text that names a
// credential file or directory (secret.CredentialFile, and the credential
// places at any depth), or "".
func credentialPath(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("\"'`()[]{}<>,;", r)
	})
	places := secret.CredentialPlaces()
	for _, w := range words {
		w = strings.TrimRight(w, ".:!?")
		if !strings.ContainsAny(w, "/.~") || len(w) < 4 {
			continue
		}
		if secret.CredentialFile(w) {
			return w
		}
		p := "/" + strings.TrimPrefix(strings.TrimPrefix(w, "~"), "$home")
		for _, place := range places {
			if strings.Contains(p+"/", "/"+place+"/") {
				return w
			}
		}
	}
	return ""
}

// excerpt returns up to n runes of s from byte i on, and a little before,
// with invisible characters shown.
func excerpt(s string, i, n int) string {
	if i < 0 {
		i = 0
	}
	start := max(0, i-10)
	for start > 0 && !utf8RuneStart(s[start]) {
		start--
	}
	r := []rune(s[start:])
	end := min(len(r), 10+n+10)
	return visible(string(r[:end]))
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// schemaTexts calls f for every string in a decoded JSON Schema: keys
// (property names) and values (descriptions, titles, enums, defaults),
// with a path to say where.
func schemaTexts(v any, path string, f func(where, text string)) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(mapKeys(x)) {
			p := path + "." + k
			f(p+" (name)", k)
			schemaTexts(x[k], p, f)
		}
	case []any:
		for i, e := range x {
			schemaTexts(e, fmt.Sprintf("%s[%d]", path, i), f)
		}
	case string:
		f(path, x)
	}
}
