package secret

import (
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// keyFormats are the common credential formats redacted wherever they
// appear, with the name they are redacted as.
// Each has the literal strings one of which every match holds, so that
// the expression runs only on text that may match (a regular expression
// that starts with \b has no literal prefix to skip ahead by, and scans a
// large text slowly).
var keyFormats = []struct {
	name  string
	hints []string
	re    *regexp.Regexp
}{
	{"PRIVATE_KEY", []string{"-----BEGIN "}, regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`)},
	{"ANTHROPIC_KEY", []string{"sk-ant-"}, regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{20,}`)},
	{"OPENAI_KEY", []string{"sk-"}, regexp.MustCompile(`\bsk-(proj-)?[A-Za-z0-9_\-]{20,}`)},
	{"AWS_ACCESS_KEY", []string{"AKIA", "ASIA"}, regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"GITHUB_TOKEN", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, regexp.MustCompile(`\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}`)},
	{"SLACK_TOKEN", []string{"xox"}, regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
}

// mayHold reports whether s holds one of the hints.
func mayHold(s string, hints []string) bool {
	for _, h := range hints {
		if strings.Contains(s, h) {
			return true
		}
	}
	return false
}

// minValue is the shortest environment value redacted by value: shorter
// ones ("1", "true") would redact ordinary text. It is also the shortest
// re-spelling of a value that is looked for.
const minValue = 8

// Redactor replaces secret values and key formats in text with
// [REDACTED:NAME]. It is immutable and safe for concurrent use.
//
// A value is found as written, and also re-spelled the common ways a
// command turns it (defence in depth: redaction cannot win against
// computation, which is why credential files are not shown at all):
// reversed (rev), in hex (xxd -p, od), in base64 (standard or URL
// alphabet, at any of the three alignments, so a value inside a longer
// encoded text is found; base64 wraps lines), with separators between its
// characters (sed 's/./&_/g', fold -w1), in other case, and either half of
// a value of 16 bytes or more (cut). These are matched on the text with
// everything but ASCII letters and digits left out and lower-cased, so
// line breaks and separators inside an encoding change nothing; the span
// redacted is the one the match covers in the text.
type Redactor struct {
	values []named // longest first, so a value containing another wins
	// spellings are the folded forms (letters and digits only, lower case)
	// looked for in folded text, longest first; heads indexes them by
	// their first 8 bytes, and filter is a bitset of those heads' hashes,
	// so that a text is scanned once for all of them.
	spellings []named
	heads     map[uint64][]int
	filter    *[filterWords]uint64
}

// filterWords is the size of the head filter in 64-bit words (64 Ki bits).
const filterWords = 1024

// head returns the first 8 bytes of s (len(s) >= 8) as a key, and its
// hash's bit in the filter.
func head(s string) (key uint64, word int, bit uint64) {
	key = uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	h := (key * 0x9E3779B97F4A7C15) >> 48 // 16 bits
	return key, int(h >> 6), 1 << (h & 63)
}

type named struct{ name, value string }

// NewRedactor returns a redactor for the secret-looking variables of
// environ (KEY=VALUE entries) and the common key formats.
func NewRedactor(environ []string) *Redactor {
	r := &Redactor{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && LooksSecret(name) && len(value) >= minValue {
			r.values = append(r.values, named{name, value})
		}
	}
	sort.SliceStable(r.values, func(i, j int) bool { return len(r.values[i].value) > len(r.values[j].value) })
	seen := map[string]bool{}
	for _, v := range r.values {
		for _, s := range spellings(v.value) {
			if f := fold(s); len(f) >= minValue && !seen[f] {
				seen[f] = true
				r.spellings = append(r.spellings, named{v.name, f})
			}
		}
	}
	sort.SliceStable(r.spellings, func(i, j int) bool { return len(r.spellings[i].value) > len(r.spellings[j].value) })
	r.heads = map[uint64][]int{}
	r.filter = new([filterWords]uint64)
	for i, sp := range r.spellings {
		key, word, bit := head(sp.value)
		r.heads[key] = append(r.heads[key], i)
		r.filter[word] |= bit
	}
	return r
}

// spellings returns the ways a value is commonly re-spelled by commands.
func spellings(v string) []string {
	out := []string{v, reverse(v), hex.EncodeToString([]byte(v))}
	for k := range 3 {
		// The encoding of v[k:] when it starts on a 3-byte boundary, cut to
		// its whole 4-character groups: what any text that embeds v at
		// some alignment holds, whatever comes before and after.
		sub := []byte(v[k:])
		if len(sub) < 3 {
			break
		}
		n := len(sub) / 3 * 4
		out = append(out, base64.StdEncoding.EncodeToString(sub)[:n], base64.URLEncoding.EncodeToString(sub)[:n])
	}
	if len(v) >= 2*minValue {
		out = append(out, v[:len(v)/2], v[len(v)/2:])
	}
	return out
}

func reverse(s string) string {
	if !utf8.ValidString(s) {
		b := []byte(s)
		slices.Reverse(b)
		return string(b)
	}
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// fold keeps the ASCII letters and digits of s, lower-cased, and every
// byte of a non-ASCII character.
func fold(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c, ok := foldByte(s[i]); ok {
			b = append(b, c)
		}
	}
	return string(b)
}

func foldByte(c byte) (byte, bool) {
	switch {
	case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c >= 0x80:
		return c, true
	case 'A' <= c && c <= 'Z':
		return c + 'a' - 'A', true
	}
	return 0, false
}

// Redact returns s with every secret replaced. A nil Redactor redacts key
// formats only.
func (r *Redactor) Redact(s string) string {
	if r != nil {
		for _, v := range r.values {
			if strings.Contains(s, v.value) {
				s = strings.ReplaceAll(s, v.value, "[REDACTED:"+v.name+"]")
			}
		}
		s = r.respelled(s)
	}
	for _, k := range keyFormats {
		if mayHold(s, k.hints) && k.re.MatchString(s) {
			s = k.re.ReplaceAllString(s, "[REDACTED:"+k.name+"]")
		}
	}
	return s
}

// Find reports the name of the first exported secret whose value s holds,
// as written or re-spelled; key formats are not looked for.
func (r *Redactor) Find(s string) (name string, found bool) {
	if r == nil {
		return "", false
	}
	for _, v := range r.values {
		if strings.Contains(s, v.value) {
			return v.name, true
		}
	}
	if spans := r.spans(s); len(spans) > 0 {
		return spans[0].name, true
	}
	return "", false
}

// span is a part of a text, [start, end), that holds a spelling of a secret.
type span struct {
	start, end int
	name       string
}

// maxSpread bounds how far apart the letters of one match may be in the
// text, as a multiple of its length: separators stretch a value, but a
// match spread over pages of punctuation is chance.
const maxSpread = 4

// spans finds the spellings in s, in order, without overlaps.
func (r *Redactor) spans(s string) []span {
	if len(r.spellings) == 0 || len(s) < minValue {
		return nil
	}
	folded := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c, ok := foldByte(s[i]); ok {
			folded = append(folded, c)
		}
	}
	f := string(folded)
	var at []int32 // at[i] is where f[i] is in s; made at the first match
	where := func(i int) int {
		if at == nil {
			at = make([]int32, 0, len(f))
			for k := 0; k < len(s); k++ {
				if _, ok := foldByte(s[k]); ok {
					at = append(at, int32(k))
				}
			}
		}
		return int(at[i])
	}
	var found []span
	for i := 0; i+minValue <= len(f); i++ {
		key, word, bit := head(f[i:])
		if r.filter[word]&bit == 0 {
			continue
		}
		for _, k := range r.heads[key] {
			sp := r.spellings[k]
			if !strings.HasPrefix(f[i:], sp.value) {
				continue
			}
			j := i + len(sp.value) - 1
			start, end := where(i), where(j)+1
			if end-start <= maxSpread*len(sp.value)+minValue {
				found = append(found, span{start, end, sp.name})
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	// Longest first were found first; keep the earliest-starting of
	// overlapping spans, widened to cover the others.
	sort.SliceStable(found, func(i, j int) bool { return found[i].start < found[j].start })
	merged := found[:1]
	for _, sp := range found[1:] {
		last := &merged[len(merged)-1]
		if sp.start < last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// respelled replaces the re-spelled secrets in s.
func (r *Redactor) respelled(s string) string {
	spans := r.spans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		b.WriteString(s[prev:sp.start])
		b.WriteString("[REDACTED:" + sp.name + "]")
		prev = sp.end
	}
	b.WriteString(s[prev:])
	return b.String()
}
