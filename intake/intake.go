// Package intake marks where text in the model's context came from, so that
// the model can tell the user's request from data: the task is wrapped as
// <user_input>, each tool result as <tool_result name="…">, and content
// from outside the project (a web page) as <external_document kind="…"
// source="…">. Content cannot break out of its wrapper: anything in it that
// looks like one of these tags — a closing tag, a fake opening tag, the same
// with look-alike brackets, spaces or other case — is escaped.
//
// What it will not do: make the model obey. Wrapping is a hint that helps
// the typical case; the gates are the boundary.
package intake

import (
	"fmt"
	"regexp"
	"strings"
)

// tagLike matches the start of anything that could be read as one of the
// wrapper tags: an ASCII or look-alike "<", optional spaces and slash, the
// tag name in any case, with "_" or "-" or a space between its words.
var tagLike = regexp.MustCompile(`(?i)[<＜﹤‹〈⟨❮❰⧼]\s*/?\s*(user[\s_-]*input|tool[\s_-]*result|external[\s_-]*document|system|instructions?)\b`)

// Escape neutralises wrapper-like tags in content: their opening bracket
// becomes "&lt;". Everything else is left as it was.
func Escape(content string) string {
	return tagLike.ReplaceAllStringFunc(content, func(m string) string {
		_, size := firstRune(m)
		return "&lt;" + m[size:]
	})
}

func firstRune(s string) (rune, int) {
	for i, r := range s {
		if i == 0 {
			return r, len(string(r))
		}
	}
	return 0, 0
}

// UserInput wraps the user's request.
func UserInput(s string) string {
	return "<user_input>\n" + Escape(s) + "\n</user_input>"
}

// ToolResult wraps a tool's result.
func ToolResult(name, s string) string {
	return fmt.Sprintf("<tool_result name=%q>\n%s\n</tool_result>", attr(name), Escape(s))
}

// External wraps content from outside the project.
func External(kind, source, s string) string {
	return fmt.Sprintf("<external_document kind=%q source=%q>\n%s\n</external_document>", attr(kind), attr(source), Escape(s))
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

// Wrapper wraps what the loop hands the model (agent.Config.Intake).
type Wrapper struct{}

// Task wraps the task as the user's input.
func (Wrapper) Task(s string) string { return UserInput(s) }

// Result wraps a tool result; a fetched web page ("URL: …" first line, as
// webfetch returns it) is an external document inside the result.
func (Wrapper) Result(name, content string) string {
	if name == "webfetch" {
		if first, rest, ok := strings.Cut(content, "\n"); ok && strings.HasPrefix(first, "URL: ") {
			content = External("web_page", strings.TrimPrefix(first, "URL: "), strings.TrimLeft(rest, "\n"))
			return fmt.Sprintf("<tool_result name=%q>\n%s\n</tool_result>", name, content)
		}
	}
	return ToolResult(name, content)
}
