package tui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/reinhq/rein/internal/ptytest"
)

var update = flag.Bool("update", false, "rewrite the golden screens under testdata")

func typed(s string) tea.KeyMsg      { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }
func press(t tea.KeyType) tea.KeyMsg { return tea.KeyMsg{Type: t} }
func paste(s string) tea.KeyMsg      { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s), Paste: true} }

// feed sends msgs to e in order, as the program would.
func feed(e Editor, msgs ...tea.Msg) Editor {
	var m tea.Model = e
	for _, msg := range msgs {
		m, _ = m.Update(msg)
	}
	return m.(Editor)
}

func TestEditorKeys(t *testing.T) {
	history := []string{"first message", "second\nof two lines"}
	tests := []struct {
		name     string
		keys     []tea.Msg
		wantDone bool
		wantEnd  End
		wantText string // sent text, or the text still in the editor
	}{
		{name: "enter sends", keys: []tea.Msg{typed("hello"), press(tea.KeyEnter)}, wantDone: true, wantText: "hello"},
		{name: "enter on nothing sends nothing", keys: []tea.Msg{press(tea.KeyEnter)}, wantDone: true, wantText: ""},
		{name: "ctrl+j is a new line", keys: []tea.Msg{typed("a"), press(tea.KeyCtrlJ), typed("b")}, wantText: "a\nb"},
		{name: "alt+enter is a new line", keys: []tea.Msg{typed("a"), tea.KeyMsg{Type: tea.KeyEnter, Alt: true}, typed("b"), press(tea.KeyEnter)},
			wantDone: true, wantText: "a\nb"},
		{name: "a trailing backslash continues", keys: []tea.Msg{typed(`a\`), press(tea.KeyEnter), typed("b"), press(tea.KeyEnter)},
			wantDone: true, wantText: "a\nb"},
		{name: "a backslash inside the line does not", keys: []tea.Msg{typed(`a\b`), press(tea.KeyEnter)}, wantDone: true, wantText: `a\b`},
		{name: "a paste of lines is one message", keys: []tea.Msg{paste("line one\r\nline two\rline three\n"), press(tea.KeyEnter)},
			wantDone: true, wantText: "line one\nline two\nline three\n"},
		{name: "a pasted enter does not send", keys: []tea.Msg{paste("x\r")}, wantText: "x\n"},
		{name: "up recalls the last message", keys: []tea.Msg{press(tea.KeyUp), press(tea.KeyEnter)}, wantDone: true, wantText: "second\nof two lines"},
		{name: "up twice goes further back", keys: []tea.Msg{press(tea.KeyUp), press(tea.KeyUp), press(tea.KeyUp), press(tea.KeyEnter)},
			wantDone: true, wantText: "first message"},
		{name: "up stops at the oldest", keys: []tea.Msg{press(tea.KeyUp), press(tea.KeyUp), press(tea.KeyUp), press(tea.KeyUp), press(tea.KeyUp)},
			wantText: "first message"},
		{name: "down comes back to the draft", keys: []tea.Msg{typed("draft"), press(tea.KeyUp), press(tea.KeyDown), press(tea.KeyDown)},
			wantText: "draft"},
		{name: "ctrl+c clears the input", keys: []tea.Msg{typed("oops"), press(tea.KeyCtrlC)}, wantText: ""},
		{name: "ctrl+c at an empty prompt interrupts", keys: []tea.Msg{press(tea.KeyCtrlC)}, wantDone: true, wantEnd: Interrupt},
		{name: "ctrl+d at an empty prompt leaves", keys: []tea.Msg{press(tea.KeyCtrlD)}, wantDone: true, wantEnd: EOF},
		{name: "ctrl+d in text deletes forward", keys: []tea.Msg{typed("ab"), press(tea.KeyLeft), press(tea.KeyCtrlD)}, wantText: "a"},
		{name: "editing keys: ctrl+a goes to the start", keys: []tea.Msg{typed("world"), press(tea.KeyCtrlA), typed("hello "), press(tea.KeyEnter)},
			wantDone: true, wantText: "hello world"},
		{name: "ctrl+w deletes a word", keys: []tea.Msg{typed("one two"), press(tea.KeyCtrlW)}, wantText: "one "},
		{name: "keys after the end are ignored", keys: []tea.Msg{typed("x"), press(tea.KeyEnter), typed("y"), press(tea.KeyEnter)},
			wantDone: true, wantText: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := feed(NewEditor(history, "status", 80, PlainStyles()), tt.keys...)
			if e.done != tt.wantDone {
				t.Fatalf("done = %v, want %v (value %q)", e.done, tt.wantDone, e.Value())
			}
			if !tt.wantDone {
				if got := e.Value(); got != tt.wantText {
					t.Fatalf("editor holds %q, want %q", got, tt.wantText)
				}
				return
			}
			end, text := e.Result()
			if end != tt.wantEnd || text != tt.wantText {
				t.Fatalf("Result() = %v %q, want %v %q", end, text, tt.wantEnd, tt.wantText)
			}
		})
	}
}

// The history a prompt browses is the one it was given: browsing does not
// change it, and the draft comes back.
func TestEditorHistoryUnchanged(t *testing.T) {
	h := []string{"a", "b"}
	e := feed(NewEditor(h, "", 80, PlainStyles()), press(tea.KeyUp), typed("X"), press(tea.KeyEnter))
	if _, text := e.Result(); text != "bX" {
		t.Fatalf("sent %q, want the recalled message edited, bX", text)
	}
	if h[0] != "a" || h[1] != "b" {
		t.Fatalf("the history changed: %q", h)
	}
}

// The input grows with its lines and the status line stays under it;
// nothing scrolls out of sight while it fits.
func TestEditorGrows(t *testing.T) {
	e := feed(NewEditor(nil, "the status", 80, PlainStyles()), typed("one"), press(tea.KeyCtrlJ), typed("two"), press(tea.KeyCtrlJ), typed("three"))
	view := e.View()
	for _, want := range []string{"You: one", "...  two", "...  three", "the status"} {
		if !strings.Contains(view, want) {
			t.Fatalf("the view lacks %q:\n%s", want, view)
		}
	}
	if strings.Index(view, "three") > strings.Index(view, "the status") {
		t.Fatalf("the status line is not under the input:\n%s", view)
	}
}

// Golden screens of the editor's View at two terminal sizes, drawn on a
// model of the terminal. go test ./internal/tui -run Golden -update
// rewrites them.
func TestEditorGolden(t *testing.T) {
	status := "turn 1523 tok · conversation 8804/200000 tok · $0.0312/$5.00 · anthropic:claude-sonnet-4 · mode default · sandbox landlock · ~/src/app"
	history := []string{"Summarise notes.txt"}
	screens := []struct {
		name string
		keys []tea.Msg
	}{
		{name: "empty"},
		{name: "typed", keys: []tea.Msg{typed("Update notes.txt: replace old with new")}},
		{name: "multiline", keys: []tea.Msg{paste("Fix the test:\n  go test ./...\nfails with exit 1"), press(tea.KeyCtrlJ), typed("and say why")}},
		{name: "history", keys: []tea.Msg{press(tea.KeyUp)}},
		{name: "sent", keys: []tea.Msg{typed("two"), press(tea.KeyCtrlJ), typed("lines"), press(tea.KeyEnter)}},
		{name: "long", keys: []tea.Msg{typed(strings.Repeat("a long line that wraps ", 9))}},
	}
	sizes := []struct{ cols, rows int }{{80, 24}, {120, 40}}
	for _, sz := range sizes {
		for _, sc := range screens {
			name := sc.name + "-" + itoa(sz.cols) + "x" + itoa(sz.rows)
			t.Run(name, func(t *testing.T) {
				e := feed(NewEditor(history, status, sz.cols, PlainStyles()), sc.keys...)
				// The renderer ends each row with CR LF, as in raw mode.
				screen, err := ptytest.RenderANSI(strings.ReplaceAll(e.View(), "\n", "\r\n"), sz.cols, sz.rows)
				if err != nil {
					t.Fatalf("the view does not draw: %v\n%q", err, e.View())
				}
				got := screen.String() + "\n"
				path := filepath.Join("testdata", name+".golden")
				if *update {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (go test -run Golden -update writes it)", err)
				}
				if got != string(want) {
					t.Fatalf("screen %s differs from %s:\n%s", name, path, got)
				}
			})
		}
	}
}

func itoa(n int) string {
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
