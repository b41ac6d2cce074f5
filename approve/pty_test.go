package approve_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/internal/ptytest"
	"github.com/reinhq/rein/tool"
)

// padded is the spoofing attack: a destructive command, then a comment of
// blanks laid out so that, printed whole, it scrolls the header and the
// command off the screen and leaves what looks like a harmless prompt.
func padded(cols int, fill string) approve.Request {
	fake := "Allow this call? go test ./..."
	cmd := "rm -rf src; #" + strings.Repeat(fill, 3500-13-len(fake)-cols) + fake + strings.Repeat(fill, cols)
	args, _ := json.Marshal(map[string]any{"command": cmd, "timeout_s": 30})
	return approve.Request{CallID: "c1", Tool: "run_bash", Args: args, Gate: "shell",
		Reason: "recursive-delete: rm -rf deletes src and everything under it",
		Roles:  map[string]tool.Role{"command": tool.RoleCommand}}
}

// approver is a TTY on the pseudo-terminal, as rein run builds it.
func approver(p *ptytest.PTY, timeout time.Duration) (approve.Approver, *approve.Lines) {
	lines := approve.NewLines(p.Slave)
	return approve.Terminal(lines, p.Slave, approve.IsTerminal(p.Slave), timeout), lines
}

type answer struct {
	ok  bool
	err error
}

func approveAsync(t *testing.T, a approve.Approver, req approve.Request) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		ok, err := a.Approve(t.Context(), req)
		ch <- answer{ok, err}
	}()
	return ch
}

// Attack: a padded command cannot push the gate, the reason or the real
// command off the screen: when [y/N] is on the screen, so are they, at
// 80×24 and at 200×50, and no line of the prompt wrapped.
func TestPromptFitsTheTerminal(t *testing.T) {
	for _, c := range []struct {
		cols, rows int
		fill       string
	}{{80, 24, " "}, {200, 50, " "}, {80, 24, "x"}, {200, 50, "x"}, {40, 12, "x"}} {
		t.Run(fmt.Sprintf("%dx%d %q", c.cols, c.rows, c.fill), func(t *testing.T) {
			t.Parallel()
			p := ptytest.Open(t, c.cols, c.rows)
			// What ran before: the screen is full.
			if _, err := p.Slave.WriteString(strings.Repeat("earlier output\n", 60)); err != nil {
				t.Fatal(err)
			}
			a, lines := approver(p, time.Minute)
			defer lines.Close()
			ch := approveAsync(t, a, padded(c.cols, c.fill))
			sc := p.WaitFor(t, "[y/N]", 1)
			wants := []string{"rein: approval needed", "tool:    run_bash", "gate:    shell",
				"reason:  recursive-delete: rm -rf deletes src", "command: rm -rf src; #", "runs:    rm -rf src", "[y/N]"}
			switch {
			case c.cols < 80:
				for i, w := range wants {
					wants[i] = w[:min(len(w), 22)]
				}
				wants = append(wants, "…[+")
			case c.fill == " ":
				wants = append(wants, "command: rm -rf src; #␠×")
			default:
				wants = append(wants, "chars hidden: v shows all]")
			}
			for _, want := range wants {
				if !sc.Shows(want) {
					t.Errorf("the screen lacks %q when [y/N] is on it:\n%s", want, sc)
				}
			}
			for _, l := range sc.Lines() {
				if strings.HasPrefix(strings.TrimSpace(l), "Allow this call? go test") || strings.Contains(l, "runs:    go test") {
					t.Errorf("the padding's fake prompt shows as a line of its own:\n%s", sc)
				}
			}
			if l := sc.Lines(); !strings.Contains(l[sc.CursorRow()], "[y/N]") || sc.CursorRow() != c.rows-1 {
				t.Errorf("the question is not the last thing on the screen (cursor row %d):\n%s", sc.CursorRow(), sc)
			}
			if !sc.Shows("earlier output") && c.cols >= 80 {
				t.Logf("the prompt took the whole screen:\n%s", sc)
			}
			p.Type(t, "n\n")
			if got := <-ch; got.ok || got.err != nil {
				t.Fatalf("n: got %v, %v", got.ok, got.err)
			}
		})
	}
}

// "v" shows the whole call, then asks again; the answer after that counts.
func TestPromptViewWhole(t *testing.T) {
	t.Parallel()
	p := ptytest.Open(t, 80, 24)
	a, lines := approver(p, time.Minute)
	defer lines.Close()
	long := strings.Repeat("abcdefghij", 300)
	req := approve.Request{Tool: "send_email", Gate: "confirm", Reason: "send_email is irreversible",
		Args:  json.RawMessage(`{"to":"ann@example.com","subject":"hi","body":"` + long + `"}`),
		Roles: map[string]tool.Role{"to": tool.RoleRecipient}}
	ch := approveAsync(t, a, req)
	sc := p.WaitFor(t, "[y/N]", 1)
	if !sc.Shows(`to:      ann@example.com`) || !sc.Shows("hidden: v shows all") {
		t.Errorf("the prompt lacks the recipient or the marker:\n%s", sc)
	}
	p.Type(t, "v\n")
	p.WaitFor(t, "[y/N]", 2)
	if !strings.Contains(p.Raw(), long) {
		t.Errorf("v did not show the body whole")
	}
	p.Type(t, "y\n")
	if got := <-ch; !got.ok || got.err != nil {
		t.Fatalf("y after v: got %v, %v; want yes\n%s", got.ok, got.err, p.Raw())
	}
}

// Attack: nothing typed before a question answers it: not a y typed
// before the first prompt, not y's typed while the approved command ran,
// not a late y to a prompt that timed out. The answer typed after the
// question does (the legitimate use).
func TestTypeAheadNeverAnswers(t *testing.T) {
	irreversible := approve.Request{CallID: "c2", Tool: "send_email", Gate: "confirm", Reason: "send_email is irreversible",
		Args: json.RawMessage(`{"to":"ann@example.com","body":"x"}`), Roles: map[string]tool.Role{"to": tool.RoleRecipient}}
	sleep := approve.Request{CallID: "c1", Tool: "run_bash", Gate: "permission", Reason: "needs a yes",
		Args: json.RawMessage(`{"command":"sleep 2"}`), Roles: map[string]tool.Role{"command": tool.RoleCommand}}

	t.Run("typed before the first prompt", func(t *testing.T) {
		t.Parallel()
		p := ptytest.Open(t, 80, 24)
		a, lines := approver(p, time.Minute)
		defer lines.Close()
		p.Type(t, "y\n")
		ch := approveAsync(t, a, irreversible)
		p.WaitFor(t, "[y/N]", 1)
		p.Type(t, "n\n")
		if got := <-ch; got.ok {
			t.Fatalf("a y typed before the question approved it:\n%s", p.Raw())
		}
	})
	t.Run("typed during the previous command", func(t *testing.T) {
		t.Parallel()
		p := ptytest.Open(t, 80, 24)
		a, lines := approver(p, time.Minute)
		defer lines.Close()
		ch := approveAsync(t, a, sleep)
		p.WaitFor(t, "[y/N]", 1)
		p.Type(t, "y\n")
		if got := <-ch; !got.ok || got.err != nil {
			t.Fatalf("y after the question: got %v, %v; want yes", got.ok, got.err)
		}
		p.Type(t, "y\ny\ny\n") // while "sleep 2" runs
		// The conversation may have read them already: they are in Lines.
		ch = approveAsync(t, a, irreversible)
		p.WaitFor(t, "[y/N]", 2)
		p.Type(t, "n\n")
		if got := <-ch; got.ok {
			t.Fatalf("y's typed during the command approved the next call:\n%s", p.Raw())
		}
	})
	t.Run("read by the conversation before the prompt", func(t *testing.T) {
		t.Parallel()
		p := ptytest.Open(t, 80, 24)
		a, lines := approver(p, time.Minute)
		defer lines.Close()
		p.Type(t, "hello\ny\n")
		if got, err := lines.Next(t.Context(), 0); err != nil || got != "hello" {
			t.Fatalf("the conversation read %q, %v", got, err)
		}
		ch := approveAsync(t, a, irreversible)
		p.WaitFor(t, "[y/N]", 1)
		p.Type(t, "\n")
		if got := <-ch; got.ok {
			t.Fatalf("a queued y approved the call:\n%s", p.Raw())
		}
	})
	t.Run("a late answer to a timed-out prompt", func(t *testing.T) {
		t.Parallel()
		p := ptytest.Open(t, 80, 24)
		lines := approve.NewLines(p.Slave)
		defer lines.Close()
		first := approve.Terminal(lines, p.Slave, true, 10*time.Millisecond)
		if ok, err := first.Approve(t.Context(), sleep); ok || err != nil {
			t.Fatalf("timed out: got %v, %v", ok, err)
		}
		p.WaitFor(t, "no answer in 10ms: No", 1)
		p.Type(t, "y\n") // too late for the first
		second := approve.Terminal(lines, p.Slave, true, time.Minute)
		ch := approveAsync(t, second, irreversible)
		p.WaitFor(t, "[y/N]", 2)
		p.Type(t, "no\n")
		if got := <-ch; got.ok {
			t.Fatalf("the late y approved the next prompt:\n%s", p.Raw())
		}
	})
	t.Run("answered after the prompt", func(t *testing.T) {
		t.Parallel()
		p := ptytest.Open(t, 200, 50)
		a, lines := approver(p, time.Minute)
		defer lines.Close()
		ch := approveAsync(t, a, irreversible)
		p.WaitFor(t, "[y/N]", 1)
		p.Type(t, "y\n")
		if got := <-ch; !got.ok || got.err != nil {
			t.Fatalf("y after the question: got %v, %v; want yes", got.ok, got.err)
		}
	})
}

// /dev/null, a file and a pipe are not terminals; a pseudo-terminal is.
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	null, err := openNull(t)
	if err != nil {
		t.Fatal(err)
	}
	if approve.IsTerminal(null) {
		t.Error("/dev/null is taken for a terminal")
	}
	if approve.IsTerminal(strings.NewReader("y\n")) {
		t.Error("a reader is taken for a terminal")
	}
	p := ptytest.Open(t, 80, 24)
	if !approve.IsTerminal(p.Slave) {
		t.Error("a pseudo-terminal is not taken for a terminal")
	}
}
