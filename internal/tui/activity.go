package tui

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/x/ansi"
)

// clearLine takes the cursor to the start of its row and erases the row.
const clearLine = "\r\x1b[K"

// Activity is the spinner line at the bottom of the terminal while a turn
// runs: a frame, what is happening ("thinking", "running run_bash"), for
// how long, and the status line. It is drawn only where the cursor is at
// the start of an empty row (after a whole line of output), and every
// write through one of its Writers first erases it, so it never mixes
// with other output; a prompt that waits on its line (an approval's
// "[y/N]") keeps it away until the answer's line is done (LineStart).
// Safe for concurrent use.
type Activity struct {
	out    io.Writer // the terminal
	styles Styles
	width  func() int
	status func() string
	frames []string
	every  time.Duration

	mu        sync.Mutex
	label     string
	since     time.Time
	on        bool // a turn runs
	shown     bool // the line is on the screen
	lineStart bool // the cursor is at the start of an empty row
	frame     int
	stop      chan struct{} // closes to end the ticker; nil when none runs
	now       func() time.Time
}

// NewActivity returns the spinner line for terminal out, width columns
// wide, showing status after what is happening.
func NewActivity(out io.Writer, st Styles, width func() int, status func() string) *Activity {
	sp := spinner.Dot
	return &Activity{out: out, styles: st, width: width, status: status, frames: sp.Frames, every: sp.FPS,
		lineStart: true, now: time.Now}
}

// Writer returns w (which writes to the same terminal) made to erase the
// spinner line before each write.
func (a *Activity) Writer(w io.Writer) io.Writer { return activityWriter{a: a, w: w} }

type activityWriter struct {
	a *Activity
	w io.Writer
}

func (aw activityWriter) Write(p []byte) (int, error) {
	a := aw.a
	a.mu.Lock()
	defer a.mu.Unlock()
	a.erase()
	n, err := aw.w.Write(p)
	if n > 0 {
		last := p[n-1]
		a.lineStart = last == '\n' || last == '\r'
	}
	return n, err
}

// erase takes the spinner line off the screen; a.mu is held.
func (a *Activity) erase() {
	if a.shown {
		_, _ = io.WriteString(a.out, clearLine)
		a.shown = false
	}
}

// Start shows label (and restarts the clock) until Stop, with the
// spinner turning.
func (a *Activity) Start(label string) {
	status := a.statusNow()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.label, a.since, a.on = label, a.now(), true
	if a.stop == nil {
		a.stop = make(chan struct{})
		go a.tick(a.stop)
	}
	a.draw(status)
}

// statusNow asks for the status line; never with a.mu held, as the
// status's owner may write through a Writer while it holds its own lock.
func (a *Activity) statusNow() string {
	a.mu.Lock()
	status := a.status
	a.mu.Unlock()
	if status == nil {
		return ""
	}
	return status()
}

// SetStatus sets the function that gives the status line.
func (a *Activity) SetStatus(status func() string) {
	a.mu.Lock()
	a.status = status
	a.mu.Unlock()
}

// Stop erases the line and stops the spinner.
func (a *Activity) Stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.on = false
	a.erase()
	if a.stop != nil {
		close(a.stop)
		a.stop = nil
	}
}

// LineStart says the cursor is at the start of an empty row again: the
// person ended a line the terminal echoed (an approval's answer).
func (a *Activity) LineStart() {
	a.mu.Lock()
	a.lineStart = true
	a.mu.Unlock()
}

func (a *Activity) tick(stop chan struct{}) {
	t := time.NewTicker(a.every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			status := a.statusNow()
			a.mu.Lock()
			a.frame++
			a.draw(status)
			a.mu.Unlock()
		}
	}
}

// draw puts the line on the screen when it may be there; a.mu is held.
func (a *Activity) draw(status string) {
	if !a.on || !a.lineStart {
		return
	}
	_, _ = io.WriteString(a.out, clearLine+a.line(status))
	a.shown = true
}

// line is the spinner line's text, cut to the terminal's width; a.mu is held.
func (a *Activity) line(status string) string {
	elapsed := a.now().Sub(a.since).Truncate(time.Second)
	text := fmt.Sprintf("%s %s", a.label, elapsed)
	if status != "" {
		text += " · " + status
	}
	w := 80
	if a.width != nil {
		if n := a.width(); n > 0 {
			w = n
		}
	}
	frame := strings.TrimSpace(a.frames[a.frame%len(a.frames)])
	text = ansi.Truncate(text, max(w-2-ansi.StringWidth(frame), 1), "…")
	return a.styles.Spinner.Render(frame) + " " + a.styles.Status.Render(text)
}
