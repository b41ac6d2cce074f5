package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
)

// chatCmd is the interactive agent: rein with no command. Each line the
// user types at the "You:" prompt runs the loop with the whole conversation
// so far, in one session (one audit log, one budget); /exit or the end of
// input leaves. Approval prompts come on the same terminal.
type chatCmd struct {
	agentFlags `embed:""`
}

// exitCommand leaves the conversation.
const exitCommand = "/exit"

func (c *chatCmd) Run(ctx context.Context, e env) error {
	p, err := c.prepare(e)
	if err != nil {
		return err
	}
	defer p.lines.Close()
	// The conversation is on stdout; with --json stdout is the event
	// stream, so the prompts go to stderr.
	talk := e.stdout
	if c.JSON {
		talk = e.stderr
	}
	fmt.Fprintf(talk, "rein: talking to %s in %s; type %s or end the input (Ctrl-D) to leave\n", c.Model, p.spec.WorkDir, exitCommand)
	// A terminal echoes what the user types; piped input is echoed by
	// rein, so the transcript reads the same.
	echo := !p.tty
	first, ok := ask(ctx, talk, p.lines, echo)
	if !ok {
		return nil // nothing was asked: no session
	}
	p.spec.Task = first
	meta := p.spec.Meta.(settings)
	meta.Conversation = true
	p.spec.Meta = meta
	p.spec.Next = func(ctx context.Context, res agent.Result) (string, bool) {
		if !c.JSON {
			fmt.Fprintf(talk, "\n%s\n\n", res.Answer)
		}
		return ask(ctx, talk, p.lines, echo)
	}
	out, err := runSession(ctx, e, p.spec, c.JSON, true, p)
	if err != nil {
		return err
	}
	return exitCode(outcomeCode(out))
}

// ask prompts "You: " on w and returns the user's next line that is not
// blank, echoing it when echo. ok is false when the user typed /exit, the
// input ended, or ctx ended.
func ask(ctx context.Context, w io.Writer, lines *approve.Lines, echo bool) (msg string, ok bool) {
	for {
		fmt.Fprint(w, "You: ")
		line, err := lines.Next(ctx, 0)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintf(w, "\nrein: %v\n", err)
			} else {
				fmt.Fprintln(w)
			}
			return "", false
		}
		if echo {
			fmt.Fprintln(w, approve.Sanitize(line))
		}
		line = strings.TrimSpace(line)
		switch {
		case line == exitCommand:
			return "", false
		case line != "":
			return line, true
		}
	}
}
