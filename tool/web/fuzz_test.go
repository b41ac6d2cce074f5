package web

import (
	"net/url"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// FuzzHTMLText: rendering any page never panics, gives valid UTF-8 through
// readable, and never shows the text of a script or a hidden element that
// comes before the fuzzed part.
func FuzzHTMLText(f *testing.F) {
	if src, err := os.ReadFile("testdata/html/article.html"); err == nil {
		f.Add(string(src))
	}
	for _, s := range []string{
		"", "<p>a</p>", "<table><td>x<td>y</table>", "<pre>\n a</pre>", `<a href="//x/y">z</a>`,
		"<ul><li><ul><li>deep</ul></ul>", "<svg><title>t</title></svg>", "\xff\xfe<p>bad utf-8 \xc3</p>",
		`<p style="display:none">x</p>`, "<template><p>t</p></template>", "<dialog>d</dialog>",
	} {
		f.Add(s)
	}
	base, _ := url.Parse("https://example.com/a/b")
	f.Fuzz(func(t *testing.T, src string) {
		const marker = "ZQXJVK"
		if strings.Contains(strings.ToUpper(src), marker) {
			return
		}
		full := "<script>" + marker + "</script><div hidden>" + marker + "</div><p aria-hidden=true>" + marker + "</p>" + src
		doc, err := html.Parse(strings.NewReader(full))
		if err != nil {
			return
		}
		if out := htmlText(doc, base); strings.Contains(out, marker) {
			t.Fatalf("hidden text shown for %q: %q", src, out)
		}
		out, err := readable([]byte(src), "text/html", base)
		if err == nil && !utf8.ValidString(out) {
			t.Fatalf("readable(%q) = %q, not valid UTF-8", src, out)
		}
	})
}
