package tui

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "github.com/charmbracelet/bubbletea"
)

// Prompt runs ed as its own bubbletea program on the terminal in (raw
// mode, bracketed paste on) drawing on out, and returns when the person
// sends or leaves, or ctx ends. The terminal is restored before it
// returns, so what reads the terminal next (an approval prompt's line
// reader) finds it as it was. One program per prompt: between prompts
// nothing of the editor reads the terminal. ed's result is the returned
// model's (Editor.Result).
func Prompt(ctx context.Context, in, out *os.File, ed Editor) (Editor, error) {
	p := tea.NewProgram(ed, tea.WithInput(in), tea.WithOutput(out), tea.WithContext(ctx),
		// rein handles its signals itself (Ctrl-C while a turn runs); in
		// raw mode Ctrl-C is a key the editor takes.
		tea.WithoutSignalHandler())
	m, err := p.Run()
	if err != nil {
		if ctx.Err() != nil {
			return ed, ctx.Err()
		}
		if errors.Is(err, tea.ErrProgramKilled) {
			return ed, fmt.Errorf("the line editor stopped: %w", err)
		}
		return ed, fmt.Errorf("the line editor: %w (run rein with stdin not a terminal for the plain reader)", err)
	}
	got, ok := m.(Editor)
	if !ok {
		return ed, fmt.Errorf("the line editor returned a %T", m)
	}
	return got, nil
}
