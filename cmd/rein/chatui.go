package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/internal/statedir"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/internal/tui"
)

// chatUI is rein chat's terminal interface: the line editor of the prompt
// with its history, and (not with --json) the spinner and status line of
// a turn. There is none unless stdin and the conversation's output are
// both terminals: in a pipe the chat reads plain lines, as before.
type chatUI struct {
	in, out *os.File // the terminal: what the person types, where the conversation shows
	styles  tui.Styles
	act     *tui.Activity // nil with --json: stdout is the event stream
	hist    *tui.History
}

// newChatUI returns the terminal interface for e, nil when there is no
// terminal to draw it on.
func newChatUI(e env, asJSON bool) *chatUI {
	in, ok := e.stdin.(*os.File)
	if !ok || !approve.IsTerminal(in) {
		return nil
	}
	w := e.stdout
	if asJSON {
		w = e.stderr
	}
	out, ok := w.(*os.File)
	if !ok || !approve.IsTerminal(out) {
		return nil
	}
	ui := &chatUI{in: in, out: out, styles: tui.NewStyles(out), hist: &tui.History{}}
	if !asJSON {
		ui.act = tui.NewActivity(out, ui.styles, ui.width, nil)
	}
	return ui
}

// width is the terminal's width in columns, 80 when it reports none.
func (ui *chatUI) width() int {
	if w, _, err := term.GetSize(ui.out.Fd()); err == nil && w > 0 {
		return w
	}
	return 80
}

// historyFile is where the prompt's history is kept: history in rein's
// state directory.
func historyFile() (string, error) {
	root, err := statedir.Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "history"), nil
}

// loadHistory reads the kept history; when it cannot be read or kept,
// the history lasts this run only, and w says so.
func (ui *chatUI) loadHistory(w io.Writer) {
	path, err := historyFile()
	if err != nil {
		fmt.Fprintf(w, "rein: the prompt's history is not kept: %s\n", termsafe.Line(err.Error()))
		return
	}
	h, err := tui.OpenHistory(path)
	if err != nil {
		fmt.Fprintf(w, "rein: %s\n", termsafe.Line(err.Error()))
	}
	ui.hist = h
}

// edit reads a message with the line editor. The terminal is fenced and
// held first (approve.Lines.Hold): what was typed before the prompt is
// discarded, and the shared line reader takes nothing while the editor
// has the terminal. io.EOF is Ctrl-D at an empty prompt; Ctrl-C there
// interrupts rein as a Ctrl-C at the plain prompt does.
func (c *chat) edit(ctx context.Context) (string, error) {
	discarded, release, err := c.p.lines.Hold()
	defer release()
	if err != nil {
		return "", err
	}
	if discarded {
		fmt.Fprintln(c.talk, "rein: discarded what was typed before this prompt")
	}
	ui := c.ui
	ed := tui.NewEditor(ui.hist.Entries(), c.status(), ui.width(), ui.styles)
	got, err := tui.Prompt(ctx, ui.in, ui.out, ed)
	if ui.act != nil {
		ui.act.LineStart() // the editor leaves the cursor at the start of a row
	}
	if err != nil {
		return "", err
	}
	end, text := got.Result()
	switch end {
	case tui.EOF:
		return "", io.EOF
	case tui.Interrupt:
		return "", interruptSelf(ctx)
	}
	if strings.TrimSpace(text) != "" {
		if err := ui.hist.Add(text); err != nil {
			fmt.Fprintf(c.talk, "rein: %s\n", termsafe.Line(err.Error()))
		}
	}
	return text, nil
}

// interruptSelf is Ctrl-C at an empty prompt: in raw mode the terminal
// sends no SIGINT, so rein sends itself one, and the chat ends as it
// does when Ctrl-C reaches the plain prompt (the session aborted and
// recorded). It returns ctx's error once ctx ends, io.EOF if it does not.
func interruptSelf(ctx context.Context) error {
	self, err := os.FindProcess(os.Getpid())
	if err == nil {
		err = self.Signal(os.Interrupt) // not on Windows: the chat ends as at EOF
	}
	if err != nil {
		return io.EOF
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(2 * time.Second):
		return io.EOF
	}
}

// status is the status line: model, mode, sandbox, work dir, and the
// tokens and cost of the turn and of the conversation against their caps.
func (c *chat) status() string {
	c.mu.Lock()
	turn, live, cost := c.live-c.turnStart, c.live, c.last.CostUSD
	c.mu.Unlock()
	dir := c.p.opts.WorkDir
	if h := home(); h != "" {
		if rel, err := filepath.Rel(h, dir); err == nil && !strings.HasPrefix(rel, "..") {
			dir = filepath.Join("~", rel)
		}
	}
	capTokens := "no cap"
	if c.limits.MaxTokens > 0 {
		capTokens = fmt.Sprint(c.limits.MaxTokens)
	}
	// What changes first, so that a narrow terminal cuts what the header
	// already said.
	s := fmt.Sprintf("turn %d tok · conversation %d/%s tok", turn, live, capTokens)
	if c.p.pricing.known {
		costCap := "no cap"
		if c.limits.MaxCostUSD > 0 {
			costCap = fmt.Sprintf("$%.2f", c.limits.MaxCostUSD)
		}
		s += fmt.Sprintf(" · $%.4f/%s", cost, costCap)
	}
	s += fmt.Sprintf(" · %s · mode %s · sandbox %s · %s", c.model, modeName(string(c.p.opts.Mode)), sandboxName(c.p.opts.Sandbox.Backend), dir)
	return termsafe.Line(s)
}

// mark colours a line of rein's: green for what was allowed, red for a
// refusal or a stop; as it is without a terminal or under NO_COLOR.
func (c *chat) mark(good bool, s string) string {
	s = termsafe.Text(s) // idempotent on text already made safe
	if c.ui == nil {
		return s
	}
	if good {
		return c.ui.styles.Good.Render(s)
	}
	return c.ui.styles.Bad.Render(s)
}

// answer is the model's answer for the screen: made safe, and on a
// terminal rendered from its markdown.
func (c *chat) answer(text string) string {
	safe := termsafe.Text(text)
	if c.ui == nil {
		return safe
	}
	return tui.Markdown(safe, c.ui.width(), c.ui.styles)
}
