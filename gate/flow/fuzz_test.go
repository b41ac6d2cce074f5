package flow_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/flow"
)

// FuzzNormalize checks the normalizer on any text: it never panics, the
// compacted form holds no space, invisible character, '-' or '.' and
// compacts to itself, and
// a value equal to an untrusted text of Window or more compacted bytes is
// always found untrusted-derived.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"", "GB29 NWBK 6016 1331 9268 19", "%25%34%31", "&#x41;&amp;lt;", "a+b%2", "ＡＢＣ１２３",
		"x\u200by\u00adz", "\xff\xfe%ff", "&#0;&#xD800;", "1 250,00 EUR", "https://evil.example/?q=%41",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		d := flow.Decode(text)
		c := flow.Compact(d)
		for _, r := range c {
			if unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || r == '-' || r == '.' || r < 0x20 {
				t.Fatalf("Compact(Decode(%q)) = %q holds %q", text, c, r)
			}
		}
		if again := flow.Compact(c); again != c {
			t.Fatalf("Compact is not idempotent on %q: %q then %q", text, c, again)
		}
		flow.Tokens(d, func(tok string) {
			if tok == "" || strings.ContainsFunc(tok, unicode.IsSpace) {
				t.Fatalf("Tokens(%q) gave %q", d, tok)
			}
		})
		// Arguments arrive as JSON, which is valid UTF-8: only such a text
		// can be given back as a value unchanged.
		if len(c) < flow.Window || !utf8.ValidString(text) {
			return
		}
		to, err := json.Marshal(text)
		if err != nil {
			t.Fatal(err)
		}
		l := flow.NewLedger()
		l.Untrusted("src", text)
		v := check(t, flow.NewGate(l, gate.Ask), "send_email", `{"to":`+string(to)+`}`)
		if v.Decision != gate.Ask {
			t.Fatalf("a value equal to the untrusted text %q was allowed", text)
		}
	})
}
