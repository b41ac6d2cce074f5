package web

import (
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlText renders a parsed page as plain text: the title, then the body's
// text with block elements on their own lines, list items as "- ",
// headings as "#", table cells separated by " | " and links as
// "text (url)". Scripts, styles, templates, embedded objects, forms'
// choices and hidden elements are left out; white space is collapsed
// except inside <pre>.
func htmlText(doc *html.Node, base *url.URL) string {
	r := &renderer{base: base}
	r.node(doc, 0)
	return strings.TrimSpace(r.w.b.String())
}

type renderer struct {
	w    textWriter
	base *url.URL
	pre  int // depth of <pre> elements
}

// maxDepth bounds the renderer's recursion; deeper elements (only a
// hostile page nests so far) are rendered as plain lines, without recursion.
const maxDepth = 256

// skipped elements never contribute text.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Svg: true,
	atom.Canvas: true, atom.Select: true, atom.Datalist: true, atom.Head: true,
	atom.Meta: true, atom.Link: true, atom.Img: true, atom.Input: true,
	atom.Audio: true, atom.Video: true, atom.Source: true, atom.Track: true,
	atom.Map: true, atom.Param: true, atom.Textarea: true,
}

// paragraphs are set apart by a blank line, lines by a line break.
var (
	paragraphs = map[atom.Atom]bool{
		atom.P: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
		atom.Pre: true, atom.Blockquote: true, atom.Table: true, atom.Ul: true, atom.Ol: true, atom.Dl: true,
		atom.Figure: true, atom.Hr: true, atom.Form: true, atom.Fieldset: true, atom.Details: true,
		atom.Address: true, atom.Header: true, atom.Footer: true, atom.Nav: true, atom.Aside: true,
		atom.Main: true, atom.Article: true, atom.Section: true, atom.Title: true, atom.Dialog: true,
	}
	lines = map[atom.Atom]bool{
		atom.Div: true, atom.Li: true, atom.Tr: true, atom.Dt: true, atom.Dd: true, atom.Br: true,
		atom.Figcaption: true, atom.Summary: true, atom.Caption: true, atom.Center: true, atom.Legend: true,
		atom.Option: true, atom.Thead: true, atom.Tbody: true, atom.Tfoot: true, atom.Label: true,
	}
)

func (r *renderer) node(n *html.Node, depth int) {
	switch n.Type {
	case html.TextNode:
		if r.pre > 0 {
			r.w.raw(n.Data)
		} else {
			r.w.text(n.Data)
		}
		return
	case html.DocumentNode:
		r.children(n, depth)
		return
	case html.ElementNode:
	default:
		return // comments, doctypes
	}
	if n.DataAtom == atom.Head {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.DataAtom == atom.Title {
				r.element(c, depth+1)
				break
			}
		}
		return
	}
	if skipped[n.DataAtom] || hidden(n) {
		return
	}
	if depth > maxDepth {
		r.flat(n)
		return
	}
	r.element(n, depth)
}

func (r *renderer) element(n *html.Node, depth int) {
	a := n.DataAtom
	gap := 0
	switch {
	case paragraphs[a]:
		gap = 2
	case lines[a]:
		gap = 1
	}
	r.w.block(gap)
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		r.w.text(strings.Repeat("#", int(n.Data[1]-'0')) + " ")
	case atom.Li:
		r.w.text("- ")
	case atom.Td, atom.Th:
		if prevCell(n) {
			r.w.text(" | ")
		}
	case atom.Pre:
		r.pre++
		defer func() { r.pre-- }()
	case atom.A:
		defer r.link(n, r.w.b.Len())
	}
	r.children(n, depth)
	r.w.block(gap)
}

func (r *renderer) children(n *html.Node, depth int) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.node(c, depth+1)
	}
}

// flat renders root's text without recursion: every element that would
// start a block starts a line, and skipped and hidden elements are left out.
func (r *renderer) flat(root *html.Node) {
	r.w.block(1)
	n := root.FirstChild
	for n != nil {
		descend := false
		switch n.Type {
		case html.TextNode:
			r.w.text(n.Data)
		case html.ElementNode:
			if !skipped[n.DataAtom] && !hidden(n) {
				if paragraphs[n.DataAtom] || lines[n.DataAtom] {
					r.w.block(1)
				}
				descend = true
			}
		}
		if descend && n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		for n != root && n.NextSibling == nil {
			n = n.Parent
		}
		if n == root {
			break
		}
		n = n.NextSibling
	}
	r.w.block(1)
}

// link appends " (url)" after a link's text when the link leads to another
// http(s) page and its text is not the URL itself.
func (r *renderer) link(n *html.Node, start int) {
	href, ok := attr(n, "href")
	if !ok || r.base == nil {
		return
	}
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return
	}
	ref, err := url.Parse(href)
	if err != nil {
		return
	}
	u := r.base.ResolveReference(ref)
	if u.Scheme != "http" && u.Scheme != "https" {
		return
	}
	text := strings.TrimSpace(r.w.b.String()[start:])
	target := u.String()
	if text == "" || text == target {
		return
	}
	r.w.text(" (" + target + ")")
}

// hidden reports whether the page hides an element from readers: the
// hidden attribute, aria-hidden="true", inline display:none or
// visibility:hidden, a closed dialog, or a hidden input.
func hidden(n *html.Node) bool {
	for _, a := range n.Attr {
		switch strings.ToLower(a.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") {
				return true
			}
		case "style":
			s := strings.Map(func(r rune) rune {
				if unicode.IsSpace(r) {
					return -1
				}
				return unicode.ToLower(r)
			}, a.Val)
			if strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden") {
				return true
			}
		case "type":
			if n.DataAtom == atom.Input && strings.EqualFold(a.Val, "hidden") {
				return true
			}
		}
	}
	if n.DataAtom == atom.Dialog {
		_, open := attr(n, "open")
		return !open
	}
	return false
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

// prevCell reports whether a table cell follows another in its row.
func prevCell(n *html.Node) bool {
	for s := n.PrevSibling; s != nil; s = s.PrevSibling {
		if s.Type == html.ElementNode && (s.DataAtom == atom.Td || s.DataAtom == atom.Th) {
			return true
		}
	}
	return false
}

// textWriter collects text, collapsing white space and keeping at most
// one blank line between blocks.
type textWriter struct {
	b     strings.Builder
	space bool // a space is due before the next word
	nl    int  // line breaks due before the next word
}

// block asks for n line breaks (1 or 2) before the next word.
func (w *textWriter) block(n int) { w.nl = max(w.nl, n) }

// flush writes the separator that is due.
func (w *textWriter) flush() {
	if w.b.Len() > 0 {
		switch {
		case w.nl > 0:
			w.b.WriteString("\n\n"[:min(w.nl, 2)])
		case w.space:
			w.b.WriteByte(' ')
		}
	}
	w.nl, w.space = 0, false
}

// text writes s with its white space collapsed.
func (w *textWriter) text(s string) {
	for s != "" {
		i := strings.IndexFunc(s, unicode.IsSpace)
		if i == 0 {
			w.space = true
			s = strings.TrimLeftFunc(s, unicode.IsSpace)
			continue
		}
		if i < 0 {
			i = len(s)
		}
		w.flush()
		w.b.WriteString(s[:i])
		s = s[i:]
	}
}

// raw writes preformatted text as it is.
func (w *textWriter) raw(s string) {
	if s == "" {
		return
	}
	w.flush()
	w.b.WriteString(strings.ReplaceAll(s, "\r\n", "\n"))
}
