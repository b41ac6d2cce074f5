package approve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/termsafe"
)

// DefaultTimeout is how long a terminal prompt waits for an answer before
// it counts as No.
const DefaultTimeout = 60 * time.Second

// The size assumed for a terminal that reports none.
const (
	defaultCols = 80
	defaultRows = 24
)

// TTY asks the human at a terminal. The question is the last thing on the
// screen and always fits it: the tool, the gate and its reason and the
// decisive arguments (the command, the recipient, the path: the tool's
// argument roles say which) sit right above "[y/N]", every line cut to the
// terminal's width with a marker saying how much is hidden; "v" shows the
// whole call and asks again. Text the model chose is shown through
// termsafe.Visible: escape sequences, control and invisible characters and
// runs of blanks are made visible, so a call cannot repaint the terminal or
// hide in white space. A shell command is also shown as the list of
// commands the shell would run.
//
// Every answer is typed after its question was drawn: the prompt fences
// In (discarding, and on a terminal flushing, everything typed before), so
// type-ahead, a line typed during a command or a late answer to a prompt
// that timed out never answers it.
//
// Only "y" or "yes" (any case) approves: an empty line, any other answer,
// the end of input, a timeout and a cancelled context all mean No.
//
// When the request carries a Pattern, the question also offers answers
// that stick (Choose): "s" yes for this session, "a" always (a rule saved
// in the user's config), "x" no for this session; the pattern they would
// cover is shown above the question, exactly as it will be matched.
type TTY struct {
	In  *Lines
	Out io.Writer
	// Timeout is how long a prompt waits; 0 means DefaultTimeout, and a
	// negative value waits until an answer or the context's end.
	Timeout time.Duration
	// Size reports the terminal's columns and rows. Nil, an error or a zero
	// means 80×24.
	Size func() (cols, rows int, err error)
	// Diff, when set, returns what a call would change as a unified diff
	// (internal/udiff), "" when it cannot tell: the prompt shows it under
	// the path, bounded to the screen ("v" shows it whole), instead of the
	// raw arguments it is made from.
	Diff func(req Request) string
	// DiffMark, when set, colours the diff's added and removed lines.
	DiffMark DiffMark

	mu sync.Mutex // one prompt at a time
}

var (
	_ Approver = (*TTY)(nil)
	_ Chooser  = (*TTY)(nil)
)

func (t *TTY) size() (cols, rows int) {
	if t.Size != nil {
		if c, r, err := t.Size(); err == nil && c > 0 && r > 0 {
			return c, r
		}
	}
	return defaultCols, defaultRows
}

// Approve shows req and reads the answer: yes or no for this call only,
// whatever the request's Pattern.
func (t *TTY) Approve(ctx context.Context, req Request) (bool, error) {
	req.Pattern = ""
	ans, err := t.Choose(ctx, req)
	return ans.Yes, err
}

// Choose shows req and reads the answer; when req has a Pattern the
// answer may reach the rest of the session or be saved (ParseAnswer).
func (t *TTY) Choose(ctx context.Context, req Request) (Answer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	timeout := t.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	keys, short := "[y/N]", "Allow? [y/N] "
	if req.Pattern != "" {
		keys, short = "[y/s/a/N/x]", "Allow? [y/s/a/N/x] "
	}
	question := fmt.Sprintf("Allow this call? %s (v shows it whole) ", keys)
	if timeout > 0 {
		question = fmt.Sprintf("Allow this call? %s (v shows it whole; No after %s) ", keys, timeout)
	}
	diff := ""
	if t.Diff != nil {
		diff = t.Diff(req)
	}
	for {
		cols, rows := t.size()
		q := question
		if strWidth(q) >= cols {
			q = short
		}
		// The question takes the last row, a note on discarded input the one
		// above, and the answers that stick the two above that.
		body := rows - 2
		if req.Pattern != "" {
			body = rows - 4
		}
		if _, err := io.WriteString(t.Out, layout(req, diff, cols, body, t.DiffMark)); err != nil {
			return Answer{}, fmt.Errorf("show the approval prompt: %w", err)
		}
		if req.Pattern != "" {
			if _, err := io.WriteString(t.Out, stickyLegend(req.Pattern, cols)); err != nil {
				return Answer{}, fmt.Errorf("show the approval prompt: %w", err)
			}
		}
		answer, err := t.ask(ctx, q, timeout)
		switch {
		case errors.Is(err, ErrTimeout):
			fmt.Fprintf(t.Out, "\nrein: no answer in %s: No\n", timeout)
			return Answer{By: "terminal"}, nil
		case errors.Is(err, io.EOF):
			fmt.Fprintln(t.Out, "\nrein: end of input: No")
			return Answer{By: "terminal"}, nil
		case err != nil:
			fmt.Fprintln(t.Out)
			return Answer{}, err
		}
		if a := strings.ToLower(strings.TrimSpace(answer)); a == "v" || a == "view" {
			if _, err := io.WriteString(t.Out, whole(req, diff)); err != nil {
				return Answer{}, fmt.Errorf("show the whole call: %w", err)
			}
			continue
		}
		ans := ParseAnswer(answer, req.Pattern)
		ans.By = "terminal"
		switch {
		case !ans.Yes && ans.Scope == Session:
			fmt.Fprintln(t.Out, "rein: No, for the rest of this session")
		case !ans.Yes:
			fmt.Fprintln(t.Out, "rein: No")
		case ans.Scope == Session:
			fmt.Fprintln(t.Out, "rein: Yes, for the rest of this session")
		case ans.Scope == Always:
			fmt.Fprintln(t.Out, "rein: Yes, always (saved in your config)")
		}
		return ans, nil
	}
}

// stickyLegend is the two lines above a question that offers answers that
// stick: what they cover, and the keys.
func stickyLegend(pattern string, cols int) string {
	return fit("s, a and x cover exactly: ", pattern, cols) + "\n" +
		cutWidth("y yes once · s yes for this session · a always (your config) · n no · x no for this session", cols) + "\n"
}

// ParseAnswer reads a typed answer to a question whose sticky answers
// would cover pattern: "y"/"yes" is yes once; "s"/"session" yes for the
// session; "a"/"always" yes for good; "x"/"never" no for the session;
// anything else no, once. With no pattern only "y"/"yes" approves, once.
func ParseAnswer(typed, pattern string) Answer {
	a := strings.ToLower(strings.TrimSpace(typed))
	if Yes(a) {
		return Answer{Yes: true}
	}
	if pattern == "" {
		return Answer{}
	}
	switch a {
	case "s", "session":
		return Answer{Yes: true, Scope: Session, Pattern: pattern}
	case "a", "always":
		return Answer{Yes: true, Scope: Always, Pattern: pattern}
	case "x", "never":
		return Answer{Scope: Session, Pattern: pattern}
	}
	return Answer{}
}

// ask fences the input once everything but question is on the screen,
// prints question and reads the answer typed after it.
func (t *TTY) ask(ctx context.Context, question string, timeout time.Duration) (string, error) {
	discarded, err := t.In.Fence()
	if err != nil {
		return "", err // an input that cannot be fenced cannot be trusted to answer
	}
	if discarded {
		fmt.Fprintln(t.Out, "rein: discarded what was typed before this question: answer it now")
	}
	if _, err := io.WriteString(t.Out, termsafe.Line(question)); err != nil {
		return "", fmt.Errorf("show the approval prompt: %w", err)
	}
	return t.In.Next(ctx, timeout)
}

// Yes reports whether a typed answer approves: "y" or "yes", in any case,
// with surrounding blanks ignored. Everything else is No.
func Yes(answer string) bool {
	a := strings.ToLower(strings.TrimSpace(answer))
	return a == "y" || a == "yes"
}

// Terminal returns the approver for a session whose human sits at in: a
// TTY when isTerminal says in is a terminal (see IsTerminal), else a
// NoTerminal, which refuses every call and says once on out why. The TTY
// takes the terminal's size from out when it is a terminal, else from in.
func Terminal(in *Lines, out io.Writer, isTerminal bool, timeout time.Duration) Approver {
	if !isTerminal {
		return &NoTerminal{Out: out}
	}
	t := &TTY{In: in, Out: out, Timeout: timeout}
	fd := in.fd
	if f, ok := out.(*os.File); ok {
		if ofd, ok := terminalFD(f); ok {
			fd = ofd
		}
	}
	if fd >= 0 {
		t.Size = func() (int, int, error) { return termSize(fd) }
	}
	return t
}

// ErrNoTerminal is NoTerminal's answer: nobody can be asked, so No.
var ErrNoTerminal = errors.New("no terminal to ask: refused (stdin is not a terminal; run rein in a terminal to be asked)")

// NoTerminal is the approver when no human can be asked: it refuses
// everything with ErrNoTerminal, and says once on Out why.
type NoTerminal struct {
	Out  io.Writer
	once sync.Once
}

// Approve returns false and ErrNoTerminal; the first call explains it on Out.
func (n *NoTerminal) Approve(_ context.Context, req Request) (bool, error) {
	n.once.Do(func() {
		fmt.Fprintf(n.Out, "rein: %s needs approval and stdin is not a terminal, so it is refused: no terminal to ask; "+
			"every such call in this session will be (run rein in a terminal to be asked)\n", termsafe.Line(req.Tool))
	})
	return false, ErrNoTerminal
}
