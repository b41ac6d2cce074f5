package secret

import (
	"regexp"
	"sort"
	"strings"
)

// keyFormats are the common credential formats redacted wherever they
// appear, with the name they are redacted as.
var keyFormats = []struct {
	name string
	re   *regexp.Regexp
}{
	{"PRIVATE_KEY", regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`)},
	{"ANTHROPIC_KEY", regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{20,}`)},
	{"OPENAI_KEY", regexp.MustCompile(`\bsk-(proj-)?[A-Za-z0-9_\-]{20,}`)},
	{"AWS_ACCESS_KEY", regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"GITHUB_TOKEN", regexp.MustCompile(`\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}`)},
	{"SLACK_TOKEN", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
}

// minValue is the shortest environment value redacted by value: shorter
// ones ("1", "true") would redact ordinary text.
const minValue = 8

// Redactor replaces secret values and key formats in text with
// [REDACTED:NAME]. It is immutable and safe for concurrent use.
type Redactor struct {
	values []named // longest first, so a value containing another wins
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
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i].value) > len(r.values[j].value) })
	return r
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
	}
	for _, k := range keyFormats {
		if k.re.MatchString(s) {
			s = k.re.ReplaceAllString(s, "[REDACTED:"+k.name+"]")
		}
	}
	return s
}
