package tui

import (
	"regexp"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
)

// Markdown renders the common markdown of a model's answer for the
// terminal: headings, **strong** and __strong__, *emphasis*, `code`,
// fenced code blocks (indented, as written), bullet and numbered lists,
// block quotes and rules; paragraphs are wrapped to width. What it does
// not know is left as written, so nothing of the answer is lost. text
// must already be safe for the terminal (termsafe.Text): the renderer
// adds only its own styles.
//
// Glamour was measured and not taken (docs/BENCHMARKS.md): its styles and
// syntax highlighter cost every rein invocation start-up time, for a
// rendering an answer needs only a small part of.
func Markdown(text string, width int, st Styles) string {
	if width <= 0 {
		width = 80
	}
	var out []string
	inCode := false
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inCode = !inCode
			continue // the fence itself is not shown; the block is indented
		}
		if inCode {
			out = append(out, "    "+st.Code.Render(line))
			continue
		}
		switch {
		case trimmed == "":
			out = append(out, "")
		case isRule(trimmed):
			out = append(out, st.Note.Render(strings.Repeat("─", min(width-1, 40))))
		case strings.HasPrefix(trimmed, "#"):
			level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			title := strings.TrimSpace(trimmed[level:])
			if level > 6 || (title != "" && trimmed[level] != ' ') {
				out = append(out, wrap(inline(line, st), width, "", "")...)
				break
			}
			out = append(out, st.Heading.Render(inline(title, st)))
		case strings.HasPrefix(trimmed, ">"):
			q := strings.TrimSpace(strings.TrimPrefix(trimmed, ">"))
			out = append(out, wrap(st.Quote.Render(inline(q, st)), width, "│ ", "│ ")...)
		default:
			indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
			if m := markdownRE().bullet.FindStringSubmatch(trimmed); m != nil {
				out = append(out, wrap(inline(m[1], st), width, indent+"• ", indent+"  ")...)
				break
			}
			if m := markdownRE().numbered.FindStringSubmatch(trimmed); m != nil {
				pad := strings.Repeat(" ", len(m[1])+1)
				out = append(out, wrap(inline(m[2], st), width, indent+m[1]+" ", indent+pad)...)
				break
			}
			out = append(out, wrap(inline(line, st), width, "", "")...)
		}
	}
	return strings.Join(out, "\n")
}

// markdownRE are the renderer's expressions, compiled at the first
// answer rendered rather than at every start of rein.
var markdownRE = sync.OnceValue(func() (re struct{ bullet, numbered, code, strong, emph *regexp.Regexp }) {
	re.bullet = regexp.MustCompile(`^[-*+]\s+(.*)$`)
	re.numbered = regexp.MustCompile(`^(\d{1,3}[.)])\s+(.*)$`)
	re.code = regexp.MustCompile("`([^`]+)`")
	re.strong = regexp.MustCompile(`\*\*([^*]+)\*\*|__([^_]+)__`)
	re.emph = regexp.MustCompile(`(^|[^*\w])\*([^*\s][^*]*)\*`)
	return re
})

func isRule(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 3 {
		return false
	}
	for _, c := range []string{"-", "*", "_"} {
		if strings.Trim(s, c) == "" {
			return true
		}
	}
	return false
}

// inline styles code spans, strong and emphasised text; the markers go.
// Code spans are styled first and their text is left alone.
func inline(s string, st Styles) string {
	var b strings.Builder
	rest := s
	for {
		loc := markdownRE().code.FindStringSubmatchIndex(rest)
		if loc == nil {
			b.WriteString(spans(rest, st))
			return b.String()
		}
		b.WriteString(spans(rest[:loc[0]], st))
		b.WriteString(st.Code.Render(rest[loc[2]:loc[3]]))
		rest = rest[loc[1]:]
	}
}

func spans(s string, st Styles) string {
	s = markdownRE().strong.ReplaceAllStringFunc(s, func(m string) string {
		return st.Strong.Render(m[2 : len(m)-2])
	})
	return markdownRE().emph.ReplaceAllStringFunc(s, func(m string) string {
		sub := markdownRE().emph.FindStringSubmatch(m)
		return sub[1] + st.Quote.Render(sub[2])
	})
}

// wrap wraps s (which may hold styles) to width, the first row after
// first and the others after rest.
func wrap(s string, width int, first, rest string) []string {
	w := max(width-1-ansi.StringWidth(first), 10)
	rows := strings.Split(ansi.Wordwrap(s, w, ""), "\n")
	for i := range rows {
		if i == 0 {
			rows[i] = first + rows[i]
		} else {
			rows[i] = rest + rows[i]
		}
	}
	return rows
}
