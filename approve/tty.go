package approve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// DefaultTimeout is how long a terminal prompt waits for an answer before
// it counts as No.
const DefaultTimeout = 60 * time.Second

// ErrTimeout is returned by Lines.Next when no line came in time.
var ErrTimeout = errors.New("no answer in time")

// Lines reads a stream line by line in the background, so that a wait for
// the next line can end with a context or a timeout. The interactive agent
// and the terminal approver share one Lines over stdin, so that neither
// swallows input the other should see.
//
// The reading goroutine is started on the first Next and ends at EOF or a
// read error. A read from a terminal cannot be interrupted: Close stops the
// goroutine from handing over any more lines, and it ends at the next line
// or EOF. A Lines is safe for concurrent use.
type Lines struct {
	r     io.Reader
	start sync.Once
	ch    chan line
	done  chan struct{}
	close sync.Once

	mu  sync.Mutex
	end error // io.EOF or the read error, once seen
}

type line struct {
	text string
	err  error
}

// NewLines returns a line reader over r.
func NewLines(r io.Reader) *Lines {
	return &Lines{r: r, ch: make(chan line), done: make(chan struct{})}
}

func (l *Lines) read() {
	sc := bufio.NewScanner(l.r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		select {
		case l.ch <- line{text: sc.Text()}:
		case <-l.done:
			return
		}
	}
	err := sc.Err()
	if err == nil {
		err = io.EOF
	}
	select {
	case l.ch <- line{err: err}:
	case <-l.done:
	}
}

// Next returns the next line without its newline. It returns io.EOF at the
// end of the stream (and on every call after), ErrTimeout when timeout (if
// positive) passes first, and ctx's error when ctx ends first.
func (l *Lines) Next(ctx context.Context, timeout time.Duration) (string, error) {
	l.mu.Lock()
	end := l.end
	l.mu.Unlock()
	if end != nil {
		return "", end
	}
	l.start.Do(func() { go l.read() })
	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	select {
	case ln := <-l.ch:
		if ln.err != nil {
			l.ended(ln.err)
			return "", ln.err
		}
		return ln.text, nil
	case <-expire:
		return "", ErrTimeout
	case <-ctx.Done():
		return "", ctx.Err()
	case <-l.done:
		return "", io.EOF
	}
}

// ended records that input has ended with err: every later read returns it.
func (l *Lines) ended(err error) {
	l.mu.Lock()
	l.end = err
	l.mu.Unlock()
}

// Drain discards the lines typed while nobody was asking (a late answer to
// a prompt that timed out, say) and returns how many there were. It does
// not wait.
func (l *Lines) Drain() int {
	n := 0
	for {
		select {
		case ln := <-l.ch:
			if ln.err != nil {
				l.ended(ln.err)
				return n
			}
			n++
		default:
			return n
		}
	}
}

// Close stops handing over lines; Next returns io.EOF afterwards.
func (l *Lines) Close() error {
	l.close.Do(func() { close(l.done) })
	return nil
}

// TTY asks the human at a terminal. It shows the whole call — the tool,
// every argument in full, the gate that asked and its reason — and waits
// for an answer. Only "y" or "yes" (any case) approves: an empty line, any
// other answer, the end of input, a timeout and a cancelled context all
// mean No.
//
// Text the model chose (arguments, the reason quoting them) is shown with
// control characters escaped, so a call cannot repaint the terminal to hide
// what it does.
type TTY struct {
	In  *Lines
	Out io.Writer
	// Timeout is how long a prompt waits; 0 means DefaultTimeout, and a
	// negative value waits until an answer or the context's end.
	Timeout time.Duration

	mu sync.Mutex // one prompt at a time
}

var _ Approver = (*TTY)(nil)

// Approve shows req and reads the answer.
func (t *TTY) Approve(ctx context.Context, req Request) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	timeout := t.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if n := t.In.Drain(); n > 0 {
		fmt.Fprintf(t.Out, "rein: ignored %d line(s) typed before this question\n", n)
	}
	var b strings.Builder
	b.WriteString("\nrein: approval needed\n")
	fmt.Fprintf(&b, "  tool:   %s\n", Sanitize(req.Tool))
	fmt.Fprintf(&b, "  gate:   %s\n", Sanitize(req.Gate))
	fmt.Fprintf(&b, "  reason: %s\n", Sanitize(req.Reason))
	b.WriteString("  arguments:\n")
	for _, a := range Arguments(req.Args) {
		fmt.Fprintf(&b, "    %s\n", a)
	}
	if timeout > 0 {
		fmt.Fprintf(&b, "Allow this call? [y/N] (No after %s) ", timeout)
	} else {
		b.WriteString("Allow this call? [y/N] ")
	}
	if _, err := io.WriteString(t.Out, b.String()); err != nil {
		return false, fmt.Errorf("show the approval prompt: %w", err)
	}
	answer, err := t.In.Next(ctx, timeout)
	switch {
	case errors.Is(err, ErrTimeout):
		fmt.Fprintf(t.Out, "\nrein: no answer in %s: No\n", timeout)
		return false, nil
	case errors.Is(err, io.EOF):
		fmt.Fprintln(t.Out, "\nrein: end of input: No")
		return false, nil
	case err != nil:
		fmt.Fprintln(t.Out)
		return false, err
	}
	yes := Yes(answer)
	if !yes {
		fmt.Fprintln(t.Out, "rein: No")
	}
	return yes, nil
}

// Yes reports whether a typed answer approves: "y" or "yes", in any case,
// with surrounding blanks ignored. Everything else is No.
func Yes(answer string) bool {
	a := strings.ToLower(strings.TrimSpace(answer))
	return a == "y" || a == "yes"
}

// Arguments renders a call's arguments for a human, one "name: value" line
// per top-level field in name order, values as compact JSON with control
// characters escaped. Arguments that are not a JSON object are shown whole
// on one line.
func Arguments(args json.RawMessage) []string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil || fields == nil {
		if len(bytes.TrimSpace(args)) == 0 {
			return []string{"(none)"}
		}
		return []string{Sanitize(compact(args))}
	}
	if len(fields) == 0 {
		return []string{"(none)"}
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = Sanitize(k) + ": " + Sanitize(compact(fields[k]))
	}
	return out
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// Sanitize escapes control and invisible formatting characters (escape
// sequences, carriage returns, bidirectional overrides) so text cannot
// rewrite what a terminal shows; printable text is unchanged.
func Sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == unicode.ReplacementChar:
			b.WriteString(`\ufffd`)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Terminal returns the approver for a session whose human sits at in: a
// TTY when isTerminal says in is a terminal, else Deny, which says once on
// out that every call needing approval is refused.
func Terminal(in *Lines, out io.Writer, isTerminal bool, timeout time.Duration) Approver {
	if isTerminal {
		return &TTY{In: in, Out: out, Timeout: timeout}
	}
	return &NoTerminal{Out: out}
}

// NoTerminal is the approver when no human can be asked: it says No to
// everything, and says once on Out why.
type NoTerminal struct {
	Out  io.Writer
	once sync.Once
}

// Approve returns false; the first call explains it on Out.
func (n *NoTerminal) Approve(_ context.Context, req Request) (bool, error) {
	n.once.Do(func() {
		fmt.Fprintf(n.Out, "rein: %s needs approval and stdin is not a terminal, so it is refused; "+
			"every such call in this session will be (run rein in a terminal to be asked)\n", Sanitize(req.Tool))
	})
	return false, nil
}
