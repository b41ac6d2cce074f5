package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/internal/termsafe"
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
	p, err := c.prepare(ctx, e)
	if err != nil {
		return err
	}
	defer p.lines.Close()
	// MCP servers start before anything is asked: one that cannot start
	// stops the session with the reason, before the first model call.
	servers, err := connectMCP(ctx, e, p.meta.Config.MCP, askerFor(p, e, c.ApprovalTimeout))
	if err != nil {
		return err
	}
	defer servers.Close()
	p.meta.MCPUnsandboxed = unsandboxed(servers)
	p.opts.Tools = append(p.opts.Tools, servers.Tools()...)
	if p.opts.ExactAllow {
		p.opts.Allow = append(p.opts.Allow, servers.Names()...)
	}
	// The conversation is on stdout; with --json stdout is the event
	// stream, so the prompts go to stderr.
	talk := e.stdout
	if c.JSON {
		talk = e.stderr
	}
	fmt.Fprintf(talk, "rein: talking to %s in %s; type %s or end the input (Ctrl-D) to leave\n", termsafe.Line(c.Model), termsafe.Line(p.opts.WorkDir), exitCommand)
	// A terminal echoes what the user types; piped input is echoed by
	// rein, so the transcript reads the same. On a terminal each "You:"
	// is answered only by what is typed after it, as an approval is: a
	// late "y" to a prompt never becomes a message to the model.
	first, ok := ask(ctx, talk, p.lines, p.tty)
	if !ok {
		return nil // nothing was asked: no session
	}
	p.meta.Conversation = true
	p.opts.Meta = p.meta
	next := func(ctx context.Context, res agent.Result) (string, bool) {
		if !c.JSON {
			fmt.Fprintf(talk, "\n%s\n\n", termsafe.Text(res.Answer))
		}
		return ask(ctx, talk, p.lines, p.tty)
	}
	out, err := runSession(ctx, e, p.opts, job{Task: first, Chat: next}, c.JSON, true, p)
	if err != nil {
		return err
	}
	return exitCode(outcomeCode(out))
}

// ask prompts "You: " on w and returns the user's next line that is not
// blank. On a terminal (tty) it first fences the input, so only a line
// typed after the prompt counts; otherwise it echoes the line read. ok is
// false when the user typed /exit, the input ended, or ctx ended.
func ask(ctx context.Context, w io.Writer, lines *approve.Lines, tty bool) (msg string, ok bool) {
	for {
		if tty {
			discarded, err := lines.Fence()
			if err != nil {
				fmt.Fprintf(w, "rein: %s\n", termsafe.Line(err.Error()))
				return "", false
			}
			if discarded {
				fmt.Fprintln(w, "rein: discarded what was typed before this prompt")
			}
		}
		fmt.Fprint(w, "You: ")
		line, err := lines.Next(ctx, 0)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintf(w, "\nrein: %s\n", termsafe.Line(err.Error()))
			} else {
				fmt.Fprintln(w)
			}
			return "", false
		}
		if !tty {
			fmt.Fprintln(w, termsafe.Line(line))
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
