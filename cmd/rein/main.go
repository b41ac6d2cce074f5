// Command rein runs AI agents with guardrails: the model proposes tool calls,
// rein's gates decide, the tools act, and everything is recorded.
//
//	rein                 a conversation with the agent (rein chat)
//	rein demo            the seven scripted seed scenarios (no key, no network)
//	rein run TASK        one task under the gates
//	rein policy check    verdicts for JSONL tool calls on stdin
//	rein sessions        the sessions in the audit dir, newest first
//	rein serve           the session host: HTTP API, approval queue, web page
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/internal/quietterm"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/sandbox"
)

// Exit codes (DESIGN.md): 0 done; 1 error; 2 usage; 3 stopped by a limit or
// a guard; 130 aborted.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitStopped = 3
	exitAborted = 130
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

type cli struct {
	Chat     chatCmd     `cmd:"" default:"withargs" help:"Talk to the agent: each message you send at the You: prompt is a turn, with the conversation so far (on a terminal a line editor: Enter sends, Alt+Enter or Ctrl+J a new line, Up recalls; /help lists commands and keys); /exit or Ctrl-D leaves. What rein does with no command."`
	Demo     demoCmd     `cmd:"" help:"Run the scripted scenarios: no key, no network. All of them when no NAME is given."`
	Run      runCmd      `cmd:"" help:"Run one task under rein's gates, budget and audit log."`
	Policy   policyCmd   `cmd:"" help:"Check tool calls against the gates without running them."`
	Tools    toolsCmd    `cmd:"" help:"List the built-in tools: name, effect class, default allowlist, what each does."`
	Audit    auditCmd    `cmd:"" help:"Check an audit log's hash chain (verify) or render it as a timeline (show)."`
	Rollback rollbackCmd `cmd:"" help:"Undo a session's file changes from its snapshots, newest first, verified by SHA-256."`
	Sessions sessionsCmd `cmd:"" help:"List the sessions in the audit dir, newest first: id, start, stop reason (or interrupted), cost, work dir, task. Every command that takes a SESSION takes an id, a unique prefix of one, or a log's path."`
	Sandbox  sandboxCmd  `cmd:"" help:"Run a command in a sandbox (exec), check the backends (doctor), clean up containers (gc)."`
	Resume   resumeCmd   `cmd:"" help:"Continue an interrupted session from its audit log; an irreversible call that may have happened is never repeated without a human."`
	Eval     evalCmd     `cmd:"" help:"Run the evaluation suites under each guard configuration and report utility, attack success, harm and false blocks."`
	Cost     costCmd     `cmd:"" help:"Print rein serve's budget ledger: cost and tokens per UTC day, per tenant and per session, and the calls in flight (--json for one object). Reads the ledger file, or asks a running server (--server URL)."`
	Serve    serveCmd    `cmd:"" help:"Host sessions behind an HTTP API and a web page: the approval queue (answer from any device; no answer in time is No), live sessions, the kill switch, each session's audit timeline. Prints the address it listens on as its first line."`
	MCP      mcpCmd      `cmd:"" name:"mcp" help:"The MCP servers of [mcp.servers]: list their tools (list), approve changed definitions (pin)."`
	Version  versionCmd  `cmd:"" help:"Print rein's version."`
}

// env is what a command may touch of the outside world.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// intr routes Ctrl-C (SIGINT) to a command that handles it itself
	// (rein chat cancels the turn in flight); nil when no signal reaches
	// this command (tests calling run).
	intr *interrupts
}

// interrupts lets a command take SIGINT before it aborts the session: the
// handler set returns true when it handled the signal (the signal is then
// not counted towards exiting at once).
type interrupts struct {
	mu      sync.Mutex
	handler func() bool
}

// set makes h the handler until the returned function is called.
func (i *interrupts) set(h func() bool) (restore func()) {
	if i == nil {
		return func() {}
	}
	i.mu.Lock()
	i.handler = h
	i.mu.Unlock()
	return func() {
		i.mu.Lock()
		i.handler = nil
		i.mu.Unlock()
	}
}

// take offers a SIGINT to the handler.
func (i *interrupts) take() bool {
	if i == nil {
		return false
	}
	i.mu.Lock()
	h := i.handler
	i.mu.Unlock()
	return h != nil && h()
}

// usageError is a mistake in how rein was called: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitCode carries a command's chosen exit status without an error message.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

func main() {
	quietterm.Restore()     // TERM as rein was started (internal/quietterm)
	if sandbox.IsHelper() { // rein re-executed as the landlock sandbox's helper
		os.Exit(sandbox.HelperMain(os.Args[2:]))
	}
	holdGC()
	intr := &interrupts{}
	ctx, stop := abortOnSignals(context.Background(), os.Stderr, intr)
	code := run(ctx, os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, intr: intr})
	stop()
	os.Exit(code)
}

// abortOnSignals returns a context that the first SIGINT, SIGTERM or SIGHUP (the
// terminal hung up) aborts
// (agent.WithAbort: the tool in flight is killed, the session is recorded
// as aborted); a second signal exits at once with 130, recorded or not.
// A SIGINT that intr's handler takes (rein chat cancelling a turn) does
// neither.
func abortOnSignals(parent context.Context, stderr io.Writer, intr *interrupts) (context.Context, func()) {
	ctx, abort := agent.WithAbort(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				if sig == os.Interrupt && n == 0 && intr.take() {
					continue
				}
				n++
				if n > 1 {
					fmt.Fprintf(stderr, "rein: %v again: exiting at once\n", termsafe.Line(sig.String()))
					os.Exit(exitAborted)
				}
				fmt.Fprintf(stderr, "rein: %v: aborting (send it again to exit at once)\n", termsafe.Line(sig.String()))
				abort(fmt.Sprintf("%v received", sig))
			}
		}
	}()
	return ctx, func() { signal.Stop(sigs); close(done) }
}

// run parses args, runs the command and returns the exit status.
func run(ctx context.Context, args []string, e env) int {
	var c cli
	exited := -1
	parser, err := kong.New(&c,
		kong.Name("rein"),
		kong.Description("rein runs AI agents with guardrails: the model proposes, rein's gates decide, tools act, and every step is recorded in an audit log."),
		kong.Writers(e.stdout, e.stderr),
		kong.Exit(func(code int) { exited = code }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.BindTo(ctx, (*context.Context)(nil)),
		kong.Bind(e),
	)
	if err != nil {
		fmt.Fprintf(e.stderr, "rein: internal error: %s\n", termsafe.Text(err.Error()))
		return exitError
	}
	if err := unknownCommand(parser.Model, args); err != nil {
		fmt.Fprintf(e.stderr, "rein: %s\n", termsafe.Text(err.Error()))
		return exitUsage
	}
	kctx, err := parser.Parse(args)
	if exited >= 0 { // --help
		return exited
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "rein: %s (see rein --help)\n", termsafe.Text(err.Error()))
		return exitUsage
	}
	err = kctx.Run()
	var code exitCode
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &usage):
		fmt.Fprintf(e.stderr, "rein: %s\n", termsafe.Text(err.Error()))
		return exitUsage
	default:
		fmt.Fprintf(e.stderr, "rein: %s\n", termsafe.Text(err.Error()))
		return exitError
	}
}

type versionCmd struct{}

func (versionCmd) Run(e env) error {
	fmt.Fprintf(e.stdout, "rein %s\n", termsafe.Line(version))
	return nil
}
