package web

import (
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestHTMLGolden renders each testdata/html/*.html and compares it with the
// .txt next to it; go test -run HTMLGolden -update rewrites them.
func TestHTMLGolden(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("testdata/html/*.html")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no golden pages: %v", err)
	}
	base, _ := url.Parse("https://gophers.example/wiki/page")
	for _, page := range pages {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := html.Parse(strings.NewReader(string(src)))
		if err != nil {
			t.Fatal(err)
		}
		got := htmlText(doc, base) + "\n"
		golden := strings.TrimSuffix(page, ".html") + ".txt"
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if got != string(want) {
			t.Errorf("%s renders as\n%s\nwant\n%s", page, got, want)
		}
	}
}

func render(t *testing.T, src string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("https://example.com/dir/")
	return htmlText(doc, base)
}

func TestHTMLText(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"collapse", "<p>  a \n\t b  </p>", "a b"},
		{"inline", "<p><b>bold</b>text <i>it</i></p>", "boldtext it"},
		{"blocks", "<div>a</div><div>b</div><p>c</p>", "a\nb\n\nc"},
		{"br", "a<br>b<br><br>c", "a\nb\nc"},
		{"heading", "<h3>Title</h3>body", "### Title\n\nbody"},
		{"list", "<ul><li>a</li><li>b</li></ul>", "- a\n- b"},
		{"cells", "<table><tr><td>a</td><td>b</td><td>c</td></tr></table>", "a | b | c"},
		{"relative link", `<a href="../x?y=1">x</a>`, "x (https://example.com/x?y=1)"},
		{"fragment link", `<a href="#top">top</a>`, "top"},
		{"mailto", `<a href="mailto:a@example.com">mail</a>`, "mail"},
		{"empty link", `<a href="/x"></a>after`, "after"},
		{"hidden attr", `<p hidden>x</p>y`, "y"},
		{"aria hidden", `<span aria-hidden="TRUE">x</span>y`, "y"},
		{"aria visible", `<span aria-hidden="false">x</span>`, "x"},
		{"display none", `<div style="color:red; display : none !important">x</div>y`, "y"},
		{"script", `<script>alert(1)</script><style>p{}</style>y`, "y"},
		{"nbsp", "a&nbsp;&nbsp;b", "a b"},
		{"entities", "&lt;tag&gt; &amp; &quot;", `<tag> & "`},
		{"pre", "<pre>a  b\n  c</pre>", "a  b\n  c"},
		{"title only", "<html><head><title>T</title></head><body></body></html>", "T"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		if got := render(t, tt.in); got != tt.want {
			t.Errorf("%s: htmlText(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// A page nested deeper than the renderer recurses still renders, and its
// hidden parts stay hidden.
func TestHTMLDeep(t *testing.T) {
	t.Parallel()
	const depth = 400 // past maxDepth, under the parser's limit of 512
	src := strings.Repeat("<div>", depth) + "deep<span hidden>secret</span>" + strings.Repeat("</div>", depth) + "end"
	got := render(t, src)
	if got != "deep\nend" {
		t.Errorf("deep page = %q, want %q", got, "deep\nend")
	}
}
