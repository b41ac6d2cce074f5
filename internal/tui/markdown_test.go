package tui

import (
	"strings"
	"testing"
)

func TestMarkdownPlain(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "heading loses its marks", in: "## Done", want: "Done"},
		{name: "strong and code", in: "I **updated** `notes.txt` and __this__", want: "I updated notes.txt and this"},
		{name: "emphasis", in: "replaced *old* with new", want: "replaced old with new"},
		{name: "a star in arithmetic stays", in: "2 * 3 * 4 = 24", want: "2 * 3 * 4 = 24"},
		{name: "markers inside code stay", in: "run `a **b** c`", want: "run a **b** c"},
		{name: "bullets", in: "- one\n* two\n  + nested", want: "• one\n• two\n  • nested"},
		{name: "numbered", in: "1. first\n2) second", want: "1. first\n2) second"},
		{name: "code block kept as written, indented", in: "```go\nx := **1**\n```", want: "    x := **1**"},
		{name: "quote", in: "> said so", want: "│ said so"},
		{name: "rule", in: "---", want: strings.Repeat("─", 35)},
		{name: "not a heading", in: "#hashtag", want: "#hashtag"},
		{name: "wrapped to the width", in: strings.Repeat("word ", 20), want: strings.TrimSpace(strings.Repeat("word ", 7)) + "\n" +
			strings.TrimSpace(strings.Repeat("word ", 7)) + "\n" + strings.TrimSpace(strings.Repeat("word ", 6))},
		{name: "a list item wraps under its text", in: "- " + strings.Repeat("word ", 10), want: "• word word word word word word\n  word word word word"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Markdown(tt.in, 36, PlainStyles())
			lines := strings.Split(got, "\n")
			for i := range lines {
				lines[i] = strings.TrimRight(lines[i], " ")
			}
			if got := strings.Join(lines, "\n"); got != tt.want {
				t.Fatalf("Markdown(%q) =\n%s\nwant\n%s", tt.in, got, tt.want)
			}
		})
	}
}

// In colour the marks become styles; without colour (NO_COLOR, not a
// terminal) no escape sequence at all.
func TestMarkdownColour(t *testing.T) {
	in := "## Title\n\n**bold** and `code`"
	if got := Markdown(in, 80, ColorStyles()); !strings.Contains(got, "\x1b[") || strings.Contains(got, "**") {
		t.Fatalf("in colour: %q", got)
	}
	if got := Markdown(in, 80, PlainStyles()); strings.Contains(got, "\x1b") {
		t.Fatalf("without colour an escape sequence: %q", got)
	}
}

func TestNoColor(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("CLICOLOR_FORCE", "1")
	var b strings.Builder
	if NewStyles(&b).Colored() {
		t.Fatal("NO_COLOR set, and the styles colour")
	}
	t.Setenv("NO_COLOR", "")
	if !NewStyles(&b).Colored() {
		t.Skip("this termenv does not take CLICOLOR_FORCE for a non-terminal")
	}
}

// Not a terminal: no colour.
func TestNoColorWithoutTerminal(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("CLICOLOR_FORCE", "")
	var b strings.Builder
	if NewStyles(&b).Colored() {
		t.Fatal("a strings.Builder is not a terminal, and the styles colour")
	}
}
