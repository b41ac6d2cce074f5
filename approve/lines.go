package approve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// ErrTimeout is returned by Lines.Next when no line came in time.
var ErrTimeout = errors.New("no answer in time")

// maxLine is the longest line Lines accepts; a longer one ends the input.
const maxLine = 1 << 20

// maxQueued is how many unread lines Lines holds before it stops reading
// ahead.
const maxQueued = 256

// pollMS is how often a terminal's reader looks whether Close was called.
const pollMS = 100

// Lines reads a stream line by line in the background, so that a wait for
// the next line can end with a context or a timeout. The interactive agent
// and the terminal approver share one Lines over stdin, so that neither
// swallows input the other should see.
//
// Every question that a typed line answers calls Fence once it is on the
// screen: what was typed before is discarded, so a line typed ahead (during
// a command, before the first prompt, after a prompt timed out) never
// answers a later question. On a terminal the guarantee is exact: Lines
// reads the terminal only when input is ready and under the same lock as
// Fence, which also flushes the terminal's input queue (tcflush), so every
// byte is either discarded or was read after the fence. Over another reader
// (a pipe, a file) Fence discards what was read so far; a read in flight
// may still deliver older bytes.
//
// The reading goroutine is started on the first Next or Fence and ends at
// EOF, a read error or Close. A Lines is safe for concurrent use.
type Lines struct {
	r  io.Reader
	fd int // the terminal's descriptor, -1 when r is not a terminal

	start  sync.Once
	close  sync.Once
	done   chan struct{}
	exited chan struct{} // closed when the reading goroutine ends

	mu      sync.Mutex
	queue   []string      // complete lines not read yet
	partial []byte        // the line being typed
	end     error         // io.EOF or the read error, once seen
	changed chan struct{} // closed and replaced when queue, end or done change
	space   *sync.Cond    // signalled when the queue shrinks, a hold ends or Lines closes
	held    int           // Holds not released: the terminal is another reader's
}

// NewLines returns a line reader over r. When r is a terminal (an *os.File
// with terminal attributes) its input queue is read and flushed directly.
func NewLines(r io.Reader) *Lines {
	l := &Lines{r: r, fd: -1, done: make(chan struct{}), exited: make(chan struct{}), changed: make(chan struct{})}
	l.space = sync.NewCond(&l.mu)
	if fd, ok := terminalFD(r); ok {
		l.fd = fd
	}
	return l
}

// IsTerminal reports whether r is a terminal a human can answer at: an
// *os.File with terminal attributes (ioctl TCGETS). /dev/null, files, pipes
// and sockets are not, though /dev/null is a character device.
func IsTerminal(r io.Reader) bool {
	_, ok := terminalFD(r)
	return ok
}

func terminalFD(r any) (int, bool) {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return -1, false
	}
	fd := int(f.Fd())
	return fd, isTTY(fd)
}

// Terminal reports whether Lines reads a terminal.
func (l *Lines) Terminal() bool { return l.fd >= 0 }

// notify wakes every waiter; l.mu is held.
func (l *Lines) notify() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *Lines) run() { l.start.Do(func() { go l.read() }) }

func (l *Lines) read() {
	defer close(l.exited)
	buf := make([]byte, 4096)
	for {
		l.mu.Lock()
		for (len(l.queue) >= maxQueued || l.held > 0) && !l.closed() {
			l.space.Wait()
		}
		l.mu.Unlock()
		if l.closed() {
			return
		}
		if l.fd >= 0 {
			if !l.readTerminal(buf) {
				return
			}
			continue
		}
		n, err := l.r.Read(buf)
		l.mu.Lock()
		l.take(buf[:n], err)
		stop := l.end != nil
		l.mu.Unlock()
		if stop {
			return
		}
	}
}

// readTerminal waits for input on the terminal and reads it under l.mu, so
// that a Fence comes wholly before or wholly after the read. It returns
// false when reading is over.
func (l *Lines) readTerminal(buf []byte) bool {
	ok, err := readable(l.fd, pollMS)
	if err != nil {
		l.mu.Lock()
		l.take(nil, fmt.Errorf("wait for terminal input: %w", err))
		l.mu.Unlock()
		return false
	}
	if !ok {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held > 0 {
		return true // another reader has the terminal now: not a byte is taken
	}
	// A Fence may have flushed the input between the wait and the lock:
	// look again, without waiting, so the read cannot block under the lock.
	if ok, err := readable(l.fd, 0); err == nil && !ok {
		return true
	}
	n, err := readFD(l.fd, buf)
	if n < 0 {
		n = 0
	}
	if err == nil && n == 0 {
		err = io.EOF
	}
	l.take(buf[:n], err)
	return l.end == nil
}

// take adds what was read to the queue, and records the end of input;
// l.mu is held.
func (l *Lines) take(p []byte, err error) {
	for len(p) > 0 {
		i := indexByte(p, '\n')
		if i < 0 {
			l.partial = append(l.partial, p...)
			break
		}
		l.partial = append(l.partial, p[:i]...)
		l.queue = append(l.queue, trimCR(string(l.partial)))
		l.partial = l.partial[:0]
		p = p[i+1:]
	}
	if len(l.partial) > maxLine && err == nil {
		err = fmt.Errorf("a line of input is longer than %d bytes", maxLine)
	}
	if err != nil {
		if len(l.partial) > 0 && errors.Is(err, io.EOF) {
			l.queue = append(l.queue, trimCR(string(l.partial))) // a last line without newline
		}
		l.partial = nil
		l.end = err
	}
	l.notify()
}

func indexByte(p []byte, c byte) int {
	for i, b := range p {
		if b == c {
			return i
		}
	}
	return -1
}

func trimCR(s string) string {
	if len(s) > 0 && s[len(s)-1] == '\r' {
		return s[:len(s)-1]
	}
	return s
}

func (l *Lines) closed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// Next returns the next line without its newline. It returns io.EOF at the
// end of the stream (and on every call after), ErrTimeout when timeout (if
// positive) passes first, and ctx's error when ctx ends first.
func (l *Lines) Next(ctx context.Context, timeout time.Duration) (string, error) {
	l.run()
	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	for {
		l.mu.Lock()
		if len(l.queue) > 0 {
			s := l.queue[0]
			l.queue = l.queue[1:]
			l.space.Signal()
			l.mu.Unlock()
			return s, nil
		}
		end, changed := l.end, l.changed
		l.mu.Unlock()
		if end != nil {
			return "", end
		}
		if l.closed() {
			return "", io.EOF
		}
		select {
		case <-changed:
		case <-expire:
			return "", ErrTimeout
		case <-ctx.Done():
			return "", ctx.Err()
		case <-l.done:
			return "", io.EOF
		}
	}
}

// Fence discards everything typed so far and not yet read by Next: the
// lines and the partial line Lines holds and, on a terminal, the
// terminal's input queue. A question calls it once it is fully drawn; the
// answer is then the first line typed after it. It reports whether
// anything was discarded.
func (l *Lines) Fence() (discarded bool, err error) {
	l.run()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fence()
}

// fence is Fence with l.mu held.
func (l *Lines) fence() (discarded bool, err error) {
	if l.fd >= 0 {
		discarded, err = flushInput(l.fd)
		if err != nil {
			err = fmt.Errorf("flush the terminal's input: %w", err)
		}
	}
	discarded = discarded || len(l.queue) > 0 || len(l.partial) > 0
	l.queue, l.partial = nil, nil
	l.space.Broadcast()
	return discarded, err
}

// Hold fences the input (see Fence) and then leaves the terminal to
// another reader until release is called: Lines reads none of it
// meanwhile, so nothing typed for that reader (the chat's line editor,
// which puts the terminal in raw mode) is queued as a line. Holds nest.
// Over a reader that is not a terminal Hold only fences: a read in flight
// cannot be held back, so share a pipe this way only when nothing else
// reads it.
func (l *Lines) Hold() (discarded bool, release func(), err error) {
	l.run()
	l.mu.Lock()
	defer l.mu.Unlock()
	// Fenced and held under one lock: no read comes between.
	if discarded, err = l.fence(); err != nil {
		return discarded, func() {}, err
	}
	l.held++
	var once sync.Once
	return discarded, func() {
		once.Do(func() {
			l.mu.Lock()
			l.held--
			l.space.Broadcast()
			l.mu.Unlock()
		})
	}, nil
}

// Close stops reading; Next returns io.EOF afterwards. On a terminal Close
// waits (up to pollMS) for the reading goroutine to end, so that it never
// touches the descriptor once the caller may close it; over another reader
// the goroutine ends at its read's return, which nothing can interrupt.
func (l *Lines) Close() error {
	l.close.Do(func() {
		l.mu.Lock()
		close(l.done)
		l.space.Broadcast()
		l.notify()
		l.mu.Unlock()
		started := true
		l.start.Do(func() { started = false; close(l.exited) })
		if started && l.fd >= 0 {
			<-l.exited
		}
	})
	return nil
}
