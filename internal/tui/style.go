// Package tui is rein chat's terminal interface: the line editor of the
// "You:" prompt (bubbletea with the bubbles textarea), its history, the
// spinner and status line while a turn runs, colour marks for approvals
// and refusals (lipgloss) and a small markdown renderer for answers.
//
// Everything here is for a terminal only: rein chat keeps its plain line
// reader in a pipe. Colour follows the output's colour profile, so it is
// off when the output is not a terminal or NO_COLOR is set.
package tui

import (
	"io"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles are the marks the chat puts on the terminal.
type Styles struct {
	r       *lipgloss.Renderer
	Prompt  lipgloss.Style // "You:"
	Status  lipgloss.Style // the status line
	Spinner lipgloss.Style
	Good    lipgloss.Style // an approval
	Bad     lipgloss.Style // a refusal, a denial, an error
	Note    lipgloss.Style // rein's own lines
	Heading lipgloss.Style // markdown headings
	Strong  lipgloss.Style
	Code    lipgloss.Style // inline code and code blocks
	Quote   lipgloss.Style
	Added   lipgloss.Style // a diff's added line
	Removed lipgloss.Style // a diff's removed line
}

// NewStyles returns the styles for output w: coloured when w is a
// terminal that takes colour and NO_COLOR is not set.
func NewStyles(w io.Writer) Styles {
	return stylesOf(lipgloss.NewRenderer(w))
}

// PlainStyles returns styles that add no escape sequence at all.
func PlainStyles() Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return stylesOf(r)
}

// ColorStyles returns styles in 256 colours whatever the output (tests).
func ColorStyles() Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	return stylesOf(r)
}

func stylesOf(r *lipgloss.Renderer) Styles {
	// Fixed colours, not adaptive ones: asking the terminal for its
	// background would read the terminal's input, which belongs to the
	// person typing.
	s := Styles{r: r}
	if r.ColorProfile() == termenv.Ascii {
		// No colour: nothing at all, not even bold, so a screen without
		// colour is the plain transcript.
		plain := r.NewStyle()
		s.Prompt, s.Status, s.Spinner, s.Good, s.Bad, s.Note = plain, plain, plain, plain, plain, plain
		s.Heading, s.Strong, s.Code, s.Quote, s.Added, s.Removed = plain, plain, plain, plain, plain, plain
		return s
	}
	s.Prompt = r.NewStyle().Bold(true).Foreground(lipgloss.Color("12"))
	s.Status = r.NewStyle().Foreground(lipgloss.Color("244"))
	s.Spinner = r.NewStyle().Foreground(lipgloss.Color("13"))
	s.Good = r.NewStyle().Bold(true).Foreground(lipgloss.Color("10"))
	s.Bad = r.NewStyle().Bold(true).Foreground(lipgloss.Color("9"))
	s.Note = r.NewStyle().Foreground(lipgloss.Color("244"))
	s.Heading = r.NewStyle().Bold(true).Foreground(lipgloss.Color("14"))
	s.Strong = r.NewStyle().Bold(true)
	s.Code = r.NewStyle().Foreground(lipgloss.Color("11"))
	s.Quote = r.NewStyle().Italic(true).Foreground(lipgloss.Color("246"))
	s.Added = r.NewStyle().Foreground(lipgloss.Color("2"))
	s.Removed = r.NewStyle().Foreground(lipgloss.Color("1"))
	return s
}

// DiffMark colours a diff line of an approval (approve.DiffMark): added
// green, removed red.
func (s Styles) DiffMark(kind byte, line string) string {
	if kind == '+' {
		return s.Added.Render(line)
	}
	return s.Removed.Render(line)
}

// Colored reports whether these styles put colour on the screen.
func (s Styles) Colored() bool { return s.r != nil && s.r.ColorProfile() != termenv.Ascii }
