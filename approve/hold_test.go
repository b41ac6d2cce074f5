package approve_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/internal/ptytest"
)

// While a Hold is in force the terminal is another reader's (the chat's
// line editor): what is typed then never becomes one of Lines' lines,
// what was typed before the hold is discarded, and after the release
// Lines reads again.
func TestHoldLeavesTheTerminalToAnotherReader(t *testing.T) {
	p := ptytest.Open(t, 80, 24)
	lines := approve.NewLines(p.Slave)
	defer lines.Close()
	if _, err := lines.Fence(); err != nil { // starts Lines' reader
		t.Fatal(err)
	}
	p.Type(t, "typed ahead\n")
	p.WaitFor(t, "typed ahead", 1) // echoed: the terminal has the line
	discarded, release, err := lines.Hold()
	if err != nil {
		t.Fatal(err)
	}
	if !discarded {
		t.Fatal("Hold did not discard what was typed before it")
	}

	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 256)
		n, _ := p.Slave.Read(buf) // the other reader: canonical mode gives a line
		got <- string(buf[:n])
	}()
	p.Type(t, "for the editor\n")
	select {
	case s := <-got:
		if s != "for the editor\n" {
			t.Fatalf("the other reader got %q", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the other reader got nothing: Lines took the terminal while held")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if line, err := lines.Next(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lines gave %q, %v while held; want nothing", line, err)
	}

	release()
	release() // a second call is harmless
	p.Type(t, "after\n")
	line, err := lines.Next(t.Context(), 30*time.Second)
	if err != nil || line != "after" {
		t.Fatalf("after the release Lines read %q, %v; want \"after\"", line, err)
	}
}
