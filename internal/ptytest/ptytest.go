// Package ptytest gives tests a real pseudo-terminal of a chosen size and
// a minimal model of the screen drawn on it, so a test can assert what a
// human would see at the moment a question appears.
//
// It is for tests only. The screen model knows what rein prints on a
// terminal: printable text (East Asian wide characters take two columns),
// line feed, carriage return, backspace, tab, wrapping at the last column
// and scrolling. Any other control character or escape sequence fails the
// test: rein must never send one from untrusted text. A PTY with ANSI set
// (rein chat's line editor and spinner draw with escape sequences) also
// knows the few a line editor sends: cursor moves, erasing, SGR styles,
// the private modes ?25 (cursor) and ?2004 (bracketed paste), and mouse
// reports turned off; any other still fails.
package ptytest

import (
	"bytes"

	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
	"golang.org/x/text/width"

	"github.com/reinhq/rein/internal/testenv"
)

// PTY is a pseudo-terminal: Slave is the terminal a program under test
// reads and writes; what the program writes is read from the master in the
// background and drawn on Screen; Type writes to the master what a human
// types.
type PTY struct {
	Slave  *os.File
	master *os.File
	cols   int
	rows   int
	// ANSI makes WaitFor draw with RenderANSI.
	ANSI bool

	mu      sync.Mutex
	changed chan struct{}
	raw     bytes.Buffer
	done    bool
}

// Open opens a pseudo-terminal of cols×rows, or skips the test (fails it
// under REIN_REQUIRE=pty) when the machine has none.
func Open(t testing.TB, cols, rows int) *PTY {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	testenv.Need(t, "pty", err)
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		testenv.Need(t, "pty", err)
	}
	ws := &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, ws); err != nil {
		t.Fatalf("set the terminal size: %v", err)
	}
	p := &PTY{Slave: s, master: m, cols: cols, rows: rows, changed: make(chan struct{})}
	go p.read()
	t.Cleanup(func() {
		s.Close()
		m.Close()
	})
	return p
}

func (p *PTY) read() {
	buf := make([]byte, 4096)
	for {
		n, err := p.master.Read(buf)
		p.mu.Lock()
		p.raw.Write(buf[:n])
		if err != nil {
			p.done = true
		}
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Type writes s to the terminal as typed keys.
func (p *PTY) Type(t testing.TB, s string) {
	t.Helper()
	if _, err := io.WriteString(p.master, s); err != nil {
		t.Fatalf("type %q: %v", s, err)
	}
}

// Raw returns every byte written to the terminal so far.
func (p *PTY) Raw() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.raw.String()
}

// WaitFor waits until the terminal's output holds want count times in all
// (count 1: at least once), and returns the screen at that moment. It fails
// the test after a minute or when the output ends first.
func (p *PTY) WaitFor(t testing.TB, want string, count int) *Screen {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		p.mu.Lock()
		raw, done, changed := p.raw.String(), p.done, p.changed
		p.mu.Unlock()
		if strings.Count(raw, want) >= count {
			render := Render
			if p.ANSI {
				render = RenderANSI
			}
			sc, err := render(raw, p.cols, p.rows)
			if err != nil {
				t.Fatalf("the terminal was sent: %v\n%q", err, raw)
			}
			return sc
		}
		if done {
			t.Fatalf("the terminal's output ended before %q appeared %d time(s):\n%s", want, count, raw)
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%q did not appear %d time(s) on the terminal in a minute:\n%s", want, count, raw)
		}
	}
}

// Screen is what a terminal shows: rows of cols cells, and the cursor.
type Screen struct {
	Cols, Rows int
	cells      [][]rune // 0 in the cell after a wide character
	row, col   int
}

// Render draws output on a cols×rows screen.
func Render(output string, cols, rows int) (*Screen, error) {
	return render(output, cols, rows, false)
}

// RenderANSI is Render that also knows the escape sequences of a line
// editor (see the package comment).
func RenderANSI(output string, cols, rows int) (*Screen, error) {
	return render(output, cols, rows, true)
}

func render(output string, cols, rows int, ansi bool) (*Screen, error) {
	s := &Screen{Cols: cols, Rows: rows, cells: make([][]rune, rows)}
	for i := range s.cells {
		s.cells[i] = blank(cols)
	}
	wrapNext := false
	for i := 0; i < len(output); {
		r, n := utf8.DecodeRuneInString(output[i:])
		if r == utf8.RuneError && n <= 1 {
			return nil, fmt.Errorf("invalid UTF-8 at byte %d", i)
		}
		i += n
		switch {
		case r == '\n':
			s.lineFeed()
			wrapNext = false
		case r == '\r':
			s.col, wrapNext = 0, false
		case r == '\b':
			if s.col > 0 {
				s.col--
			}
			wrapNext = false
		case r == '\t':
			s.col = min((s.col/8+1)*8, cols-1)
		case r == '\a':
		case r == 0x1b && ansi:
			n, err := s.escape(output[i:])
			if err != nil {
				return nil, fmt.Errorf("%w at byte %d", err, i-1)
			}
			i += n
			wrapNext = false
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			return nil, fmt.Errorf("control character %U at byte %d", r, i-n)
		default:
			w := 1
			if k := width.LookupRune(r).Kind(); k == width.EastAsianWide || k == width.EastAsianFullwidth {
				w = 2
			}
			if wrapNext || s.col+w > cols {
				s.col = 0
				s.lineFeed()
				wrapNext = false
			}
			s.cells[s.row][s.col] = r
			if w == 2 {
				s.cells[s.row][s.col+1] = 0
			}
			s.col += w
			if s.col >= cols {
				s.col, wrapNext = cols-1, true
			}
		}
	}
	return s, nil
}

// escape applies the CSI sequence after an ESC at the start of seq and
// returns its length.
func (s *Screen) escape(seq string) (int, error) {
	if !strings.HasPrefix(seq, "[") {
		return 0, fmt.Errorf("escape sequence %q", head(seq))
	}
	end := 1
	for end < len(seq) && seq[end] >= 0x20 && seq[end] <= 0x3f {
		end++
	}
	if end >= len(seq) || seq[end] < 0x40 || seq[end] > 0x7e {
		return 0, fmt.Errorf("unfinished escape sequence %q", head(seq))
	}
	params, final := seq[1:end], seq[end]
	private := strings.HasPrefix(params, "?")
	n := 1
	var args []int
	for _, f := range strings.Split(strings.TrimPrefix(params, "?"), ";") {
		v := 0
		if _, err := fmt.Sscanf(f, "%d", &v); err != nil && f != "" {
			return 0, fmt.Errorf("escape sequence %q", head(seq))
		}
		args = append(args, v)
	}
	if len(args) > 0 && args[0] > 0 {
		n = args[0]
	}
	switch {
	case private && (final == 'h' || final == 'l') && (params == "?25" || params == "?2004"):
	case private && final == 'l' && (params == "?1002" || params == "?1003" || params == "?1006"): // mouse reports off
	case private:
		return 0, fmt.Errorf("escape sequence %q", head(seq))
	case final == 'm': // styles: not drawn
	case final == 'A':
		s.row = max(s.row-n, 0)
	case final == 'B':
		s.row = min(s.row+n, s.Rows-1)
	case final == 'C':
		s.col = min(s.col+n, s.Cols-1)
	case final == 'D':
		s.col = max(s.col-n, 0)
	case final == 'G':
		s.col = min(n-1, s.Cols-1)
	case final == 'K':
		from, to := s.col, s.Cols
		switch args[0] {
		case 1:
			from, to = 0, s.col+1
		case 2:
			from = 0
		}
		for c := from; c < to && c < s.Cols; c++ {
			s.cells[s.row][c] = ' '
		}
	case final == 'J':
		if args[0] == 2 {
			for r := range s.cells {
				s.cells[r] = blank(s.Cols)
			}
			break
		}
		for c := s.col; c < s.Cols; c++ {
			s.cells[s.row][c] = ' '
		}
		for r := s.row + 1; r < s.Rows; r++ {
			s.cells[r] = blank(s.Cols)
		}
	default:
		return 0, fmt.Errorf("escape sequence %q", head(seq))
	}
	return end + 1, nil
}

func head(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func blank(n int) []rune {
	r := make([]rune, n)
	for i := range r {
		r[i] = ' '
	}
	return r
}

func (s *Screen) lineFeed() {
	if s.row < s.Rows-1 {
		s.row++
		return
	}
	copy(s.cells, s.cells[1:])
	s.cells[s.Rows-1] = blank(s.Cols)
}

// Lines returns the screen's rows, trailing blanks trimmed.
func (s *Screen) Lines() []string {
	out := make([]string, s.Rows)
	for i, row := range s.cells {
		var b strings.Builder
		for _, r := range row {
			if r != 0 {
				b.WriteRune(r)
			}
		}
		out[i] = strings.TrimRight(b.String(), " ")
	}
	return out
}

// String is the screen as text, one row a line.
func (s *Screen) String() string { return strings.Join(s.Lines(), "\n") }

// Shows reports whether some row of the screen holds want.
func (s *Screen) Shows(want string) bool {
	for _, l := range s.Lines() {
		if strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// CursorRow is the cursor's row (0 the top).
func (s *Screen) CursorRow() int { return s.row }
