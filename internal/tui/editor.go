package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// The prompt of the first line and of the lines after it.
const (
	PromptText = "You: "
	morePrompt = "...  "
)

// maxRows is the most rows the input takes before it scrolls.
const maxRows = 12

// End is how a prompt ended.
type End int

const (
	// Sent: Enter sent the text (which may be empty).
	Sent End = iota
	// EOF: Ctrl-D at an empty prompt.
	EOF
	// Interrupt: Ctrl-C at an empty prompt.
	Interrupt
)

// Editor is the bubbletea model of the "You:" prompt: a textarea with
// the readline keys of bubbles (Ctrl-A/E, Alt-B/F, Ctrl-W, Ctrl-K/U,
// Left/Right…), Enter to send, Alt+Enter or Ctrl+J for a new line, a
// line ending in a backslash continued on Enter (as the plain reader
// does), Up and Down through the history at the first and last line, a
// bracketed paste inserted whole (its newlines stay in the one message),
// Ctrl-C clearing the input (leaving at an empty prompt) and Ctrl-D
// leaving at an empty prompt. Under the input is a status line.
type Editor struct {
	ta      textarea.Model
	styles  Styles
	status  string
	width   int
	history []string // oldest first
	pos     int      // the history entry shown; len(history): the draft
	draft   string   // what was typed before Up
	done    bool
	end     End
	text    string
}

// NewEditor returns the prompt's model for a terminal width columns
// wide, with the history to browse and a status line to show under it.
func NewEditor(history []string, status string, width int, st Styles) Editor {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.MaxWidth = 0
	ta.Placeholder = ""
	ta.SetPromptFunc(len(PromptText), func(line int) string {
		if line == 0 {
			return st.Prompt.Render(PromptText)
		}
		return st.Prompt.Render(morePrompt)
	})
	plain := textarea.Style{Base: st.r.NewStyle(), CursorLine: st.r.NewStyle(), Text: st.r.NewStyle(),
		Prompt: st.r.NewStyle(), EndOfBuffer: st.r.NewStyle(), Placeholder: st.r.NewStyle(),
		LineNumber: st.r.NewStyle(), CursorLineNumber: st.r.NewStyle()}
	ta.FocusedStyle, ta.BlurredStyle = plain, plain
	ta.EndOfBufferCharacter = ' '
	// A static cursor: no blink timer, and the same screen every time.
	ta.Cursor.SetMode(cursor.CursorStatic)
	ta.Cursor.Style = st.r.NewStyle().Reverse(true)
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	ta.KeyMap.Paste.SetEnabled(false) // Ctrl-V would run a clipboard tool; the terminal pastes
	ta.KeyMap.LinePrevious.SetEnabled(false)
	ta.KeyMap.LineNext.SetEnabled(false)
	ta.Focus()
	e := Editor{ta: ta, styles: st, status: status, history: history, pos: len(history)}
	e.resize(width)
	return e
}

// Init starts nothing: the cursor does not blink.
func (e Editor) Init() tea.Cmd { return nil }

// Result is how the prompt ended and the text sent.
func (e Editor) Result() (End, string) { return e.end, e.text }

// Value is the text in the editor now.
func (e Editor) Value() string { return e.ta.Value() }

func (e *Editor) resize(width int) {
	if width <= 0 {
		width = 80
	}
	e.width = width
	e.ta.SetWidth(max(width-1, len(PromptText)+1)) // the last column stays free: no automatic wrap
	e.fit()
}

// fit makes the input as tall as its text, up to maxRows.
func (e *Editor) fit() {
	w := max(e.width-1-len(PromptText), 1)
	rows := 0
	for _, l := range strings.Split(e.ta.Value(), "\n") {
		rows += max(1, (ansi.StringWidth(l)+w)/w)
	}
	e.ta.SetHeight(min(max(rows, 1), maxRows))
}

// Update handles a key, a paste or a new terminal size.
func (e Editor) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if e.done {
		return e, nil
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		e.resize(msg.Width)
		return e, nil
	case tea.KeyMsg:
		// At full height while the text changes, so that the textarea
		// does not scroll a line out of sight; fit shrinks it after.
		e.ta.SetHeight(maxRows)
		if msg.Paste {
			e.ta.InsertString(pasted(string(msg.Runes)))
			e.fit()
			return e, nil
		}
		switch msg.String() {
		case "enter":
			v := e.ta.Value()
			if line := currentLine(e.ta); strings.HasSuffix(line, `\`) && e.atEnd() {
				// The plain reader's continuation: the backslash becomes a new line.
				e.ta.SetValue(strings.TrimSuffix(v, `\`) + "\n")
				e.fit()
				return e, nil
			}
			return e.finish(Sent, v)
		case "ctrl+c":
			if e.ta.Value() == "" {
				return e.finish(Interrupt, "")
			}
			e.ta.Reset()
			e.pos, e.draft = len(e.history), ""
			e.fit()
			return e, nil
		case "ctrl+d":
			if e.ta.Value() == "" {
				return e.finish(EOF, "")
			}
		case "up":
			if e.ta.Line() == 0 && e.pos > 0 {
				if e.pos == len(e.history) {
					e.draft = e.ta.Value()
				}
				e.pos--
				e.show(e.history[e.pos])
				return e, nil
			}
			e.ta.CursorUp()
			return e, nil
		case "down":
			if e.ta.Line() == e.ta.LineCount()-1 && e.pos < len(e.history) {
				e.pos++
				if e.pos == len(e.history) {
					e.show(e.draft)
				} else {
					e.show(e.history[e.pos])
				}
				return e, nil
			}
			e.ta.CursorDown()
			return e, nil
		}
	}
	var cmd tea.Cmd
	e.ta, cmd = e.ta.Update(msg)
	e.fit()
	return e, cmd
}

// show puts s in the editor, the cursor at its end.
func (e *Editor) show(s string) {
	e.ta.SetHeight(maxRows)
	e.ta.SetValue(s)
	e.fit()
}

func (e *Editor) atEnd() bool {
	return e.ta.Line() == e.ta.LineCount()-1 && lineCol(e.ta) == len([]rune(currentLine(e.ta)))
}

func (e Editor) finish(end End, text string) (tea.Model, tea.Cmd) {
	e.done, e.end, e.text = true, end, text
	return e, tea.Quit
}

// currentLine is the logical line the cursor is on.
func currentLine(ta textarea.Model) string {
	lines := strings.Split(ta.Value(), "\n")
	if r := ta.Line(); r >= 0 && r < len(lines) {
		return lines[r]
	}
	return ""
}

// lineCol is the cursor's column in runes within its logical line.
func lineCol(ta textarea.Model) int {
	li := ta.LineInfo()
	return li.StartColumn + li.ColumnOffset
}

// pasted is a bracketed paste as text: the terminal's line ends become
// new lines of the message.
func pasted(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// View draws the input and the status line under it; once the prompt has
// ended, only what was sent, as the transcript keeps it.
func (e Editor) View() string {
	if e.done {
		var b strings.Builder
		for i, l := range strings.Split(e.text, "\n") {
			p := PromptText
			if i > 0 {
				p = morePrompt
			}
			b.WriteString(e.styles.Prompt.Render(p) + l + "\n")
		}
		return b.String()
	}
	v := e.ta.View()
	if e.status == "" {
		return v
	}
	return lipgloss.JoinVertical(lipgloss.Left, v, e.styles.Status.Render(ansi.Truncate(e.status, e.width-1, "…")))
}
