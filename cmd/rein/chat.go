package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/internal/checkpoint"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/model/scripted"
)

// chatCmd is the interactive agent: rein with no command. Each message the
// user types at the "You:" prompt is a turn, run with the whole
// conversation so far, in one session (one audit log). A turn ends on its
// own (done, cancelled with Ctrl-C, a per-turn cap, a failed model call)
// and the prompt comes back; /exit, the end of input, Ctrl-C at the prompt
// or twice within a second leave. Approval prompts and the model's
// questions come on the same terminal.
type chatCmd struct {
	agentFlags `embed:""`
	Resume     string `placeholder:"SESSION" help:"Go on with an earlier conversation (or run): its id, a unique prefix of one, or its audit log's path (rein sessions lists them). It goes on in its own audit log and work dir, with the model (and its server), tools, mode and sandbox it had unless flags say otherwise — never unsandboxed or in bypass mode unless asked again; the config's rules and caps are today's."`
}

// The chat's slash commands.
const (
	exitCommand = "/exit"
	helpText    = `rein chat commands:
  /help   this list
  /cost   tokens and cost of the last turn and of the conversation, against their caps
  /tools  the tools the model may call
  /mode   the permission mode and sandbox
  /undo   put back the files the last turn changed (through the file tools)
  /audit  the audit log of this conversation
  /exit   leave (so do Ctrl-D, and Ctrl-C at the prompt)
On a terminal: Enter sends, Alt+Enter or Ctrl+J starts a new line, a paste of several lines
is one message, Up/Down go through the messages you sent (kept in the state dir), Ctrl-C
clears the line (at an empty prompt it leaves, as Ctrl-D does).
In a pipe: one line is one message; a line ending in \ goes on on the next line.
Ctrl-C while a turn runs cancels the turn (its command is killed); twice within 1s leaves.`
)

func (c *chatCmd) Run(ctx context.Context, e env) error {
	// On a terminal the prompt is a line editor and a turn shows a
	// spinner and the status line; every other write first erases the
	// spinner, so the writers are wrapped before anything is built on them.
	ui := newChatUI(e, c.JSON)
	if ui != nil && ui.act != nil {
		e.stdout, e.stderr = ui.act.Writer(e.stdout), ui.act.Writer(e.stderr)
	}
	var earlier *earlierChat
	if c.Resume != "" {
		// Read before anything is built: the conversation's work dir and
		// model are the session's own. Its log stays locked until the
		// session closes it (or, when nothing is said, until we leave).
		var err error
		if earlier, err = c.openEarlier(); err != nil {
			return err
		}
		defer earlier.close()
	}
	p, err := c.prepare(ctx, e)
	if err != nil {
		return err
	}
	// A terminal session: its sandbox starts while the model thinks about
	// its first turn (rein serve's idle sessions do not hold one).
	p.opts.Sandbox.Warm = true
	defer p.lines.Close()
	if earlier != nil {
		p.opts.AuditDir = filepath.Dir(earlier.path)
		if s, ok := p.opts.Model.(*scripted.Model); ok {
			s.Skip(earlier.point.ModelCalls) // the script goes on past the calls the conversation made
		}
	}
	if ui != nil {
		if ui.act != nil {
			defer ui.act.Stop()
			p.styles = &ui.styles
			if t, ok := p.opts.Approver.(*approve.TTY); ok && ui.styles.Colored() {
				t.DiffMark = ui.styles.DiffMark
			}
			if qa, ok := p.opts.Asker.(questionAsker); ok {
				qa.answered = ui.act.LineStart // the answer's line ended: the spinner may come back
				p.opts.Asker = qa
			}
		}
		ui.loadHistory(e.stderr)
	}
	// MCP servers start before anything is asked: one that cannot start
	// stops the session with the reason, before the first model call.
	mcpEgress := &guarded.EgressLog{Who: mcpEgressWho}
	p.opts.Egress = append(p.opts.Egress, mcpEgress)
	servers, closeServers, err := connectMCP(ctx, e, p.meta.Config, p.opts.WorkDir, askerFor(p, e, c.ApprovalTimeout), mcpEgress)
	if err != nil {
		return err
	}
	defer closeServers()
	p.meta.MCPUnsandboxed = unsandboxed(servers)
	p.opts.Tools = append(p.opts.Tools, servers.Tools()...)
	if p.opts.ExactAllow {
		p.opts.Allow = append(p.opts.Allow, servers.Names()...)
	}
	book, err := checkpoint.Open(p.opts.WorkDir)
	if err != nil {
		return err
	}
	defer book.Close()
	// The conversation is on stdout; with --json stdout is the event
	// stream, so the prompts go to stderr.
	talk := e.stdout
	if c.JSON {
		talk = e.stderr
	}
	ch := &chat{p: p, talk: talk, book: book, tty: p.tty, limits: p.opts.Limits, json: c.JSON, auditDir: p.opts.AuditDir, ui: ui, model: c.Model}
	if ch.limits == (budget.Limits{}) {
		ch.limits = budget.Defaults()
	}
	if ui != nil && ui.act != nil {
		ui.act.SetStatus(ch.status)
	}
	fmt.Fprintf(talk, "rein: talking to %s in %s (mode %s, sandbox %s); /help lists commands, %s or Ctrl-D leaves\n",
		termsafe.Line(c.Model), termsafe.Line(p.opts.WorkDir), termsafe.Line(modeName(string(p.opts.Mode))),
		termsafe.Line(sandboxName(p.opts.Sandbox.Backend)), exitCommand)
	if earlier != nil {
		ch.goOnFrom(earlier)
	}
	// A terminal echoes what the user types; piped input is echoed by
	// rein, so the transcript reads the same. On a terminal each "You:"
	// is answered only by what is typed after it, as an approval is: a
	// late "y" to a prompt never becomes a message to the model.
	first, ok := ch.ask(ctx)
	if !ok {
		return nil // nothing was asked: no session
	}
	restore := e.intr.set(ch.interrupt)
	defer restore()
	p.meta.Conversation = true
	p.opts.Meta = p.meta
	p.opts.TurnContext = ch.turnContext
	j := job{Task: first, Chat: ch.next, Observe: ch.observe}
	if earlier != nil {
		j.Task, j.Resume = earlier.point.Task, earlier.resumed(first, ch.next)
		earlier.log = nil // the session closes it
	}
	out, err := runSession(ctx, e, p.opts, j, c.JSON, true, p)
	if err != nil {
		return err
	}
	if ch.left && !guarded.TurnEnded(ctx, out.Result.Result) {
		// The user left a conversation that could have gone on: the
		// last turn's own stop (a cancelled one, a cap) is not the session's.
		if out.Unsaved+out.Unsettled > 0 {
			return exitCode(exitError)
		}
		return nil
	}
	return exitCode(outcomeCode(out))
}

func modeName(m string) string {
	if m == "" {
		return "default"
	}
	return m
}

// chat is a conversation in progress: the turn in flight, what it changed,
// what the conversation used.
type chat struct {
	p        *prepared
	talk     io.Writer
	book     *checkpoint.Book
	tty      bool
	json     bool
	limits   budget.Limits
	auditDir string

	mu      sync.Mutex
	turn    int
	abort   func(reason string) // the turn in flight's, nil at the prompt
	lastInt time.Time
	session string
	before  agent.Result // what the conversation had used when the turn began
	last    agent.Result
	left    bool // the user left (/exit, end of input)

	ui        *chatUI // the terminal interface; nil in a pipe
	model     string
	live      int64 // the conversation's tokens as the model calls of the turn in flight report them
	turnStart int64 // the conversation's tokens when the turn began
}

// turnContext gives turn n its own abortable context (harness.Spec.TurnContext).
func (c *chat) turnContext(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	tctx, abort := agent.WithAbort(ctx)
	c.mu.Lock()
	c.turn, c.abort = n, abort
	c.turnStart = c.live
	c.mu.Unlock()
	c.book.Begin()
	if c.ui != nil && c.ui.act != nil {
		c.ui.act.Start("thinking")
	}
	return tctx, func() {
		c.mu.Lock()
		c.abort = nil
		c.mu.Unlock()
		abort("the turn ended")
	}
}

// interrupt takes a Ctrl-C: while a turn runs it cancels the turn; at the
// prompt, or a second time within a second, it is not taken, and the
// session is aborted (the conversation ends, recorded).
func (c *chat) interrupt() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	again := !c.lastInt.IsZero() && now.Sub(c.lastInt) < time.Second
	c.lastInt = now
	if c.abort == nil || again {
		return false
	}
	fmt.Fprintf(c.talk, "\nrein: Ctrl-C: cancelling turn %d (Ctrl-C again within 1s leaves rein)\n", c.turn)
	c.abort(fmt.Sprintf("the user cancelled turn %d (Ctrl-C)", c.turn))
	return true
}

// observe follows the audit records: the session's id, and each file a
// file tool is about to change, saved for /undo.
func (c *chat) observe(r audit.Record) {
	switch r.Type {
	case audit.SessionStart:
		c.mu.Lock()
		c.session = r.Session
		c.mu.Unlock()
	case audit.Intent:
		if rel, ok := changedPath(c.p.opts.WorkDir, r.Tool, r.Args); ok {
			c.book.Save(rel)
		}
		c.activity("running " + termsafe.Line(r.Tool))
	case audit.Result:
		c.activity("thinking")
	case audit.ModelCall:
		c.mu.Lock()
		c.live = r.Tokens
		c.mu.Unlock()
	case audit.Verdict:
		if r.Gate == gate.NameApproval && c.ui != nil && c.ui.act != nil {
			c.ui.act.LineStart() // the person answered: the answer's line ended
		}
	}
}

// activity shows what the turn in flight does, on a terminal.
func (c *chat) activity(label string) {
	if c.ui == nil || c.ui.act == nil {
		return
	}
	c.mu.Lock()
	running := c.abort != nil
	c.mu.Unlock()
	if running {
		c.ui.act.Start(label)
	}
}

// changedPath is the file a write_file or edit_file call changes, relative
// to the work directory; ok is false for another tool or a path outside.
func changedPath(workdir, tool string, args json.RawMessage) (string, bool) {
	if tool != "write_file" && tool != "edit_file" {
		return "", false
	}
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(args, &a) != nil || a.Path == "" {
		return "", false
	}
	p := a.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(workdir, p)
	}
	rel, err := filepath.Rel(workdir, filepath.Clean(p))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// next ends a turn on the screen (its answer, or why it stopped and what
// to do; what it changed; what it used) and reads the next message.
func (c *chat) next(ctx context.Context, res agent.Result) (string, bool) {
	c.mu.Lock()
	c.last = res
	c.live = res.Tokens
	turn := c.turn
	c.mu.Unlock()
	if c.ui != nil && c.ui.act != nil {
		c.ui.act.Stop()
	}
	if !c.json {
		if res.Stop == agent.StopDone {
			fmt.Fprintf(c.talk, "\n%s\n\n", c.answer(res.Answer))
		} else {
			fmt.Fprintf(c.talk, "\n%s\n", c.mark(false, fmt.Sprintf("rein: turn %d stopped: %s", turn, termsafe.Line(turnStop(res, c.limits)))))
		}
		for _, ch := range c.book.Changed() {
			fmt.Fprintf(c.talk, "rein: turn %d %s %s\n", turn, termsafe.Line(ch.Action), termsafe.Line(ch.Path))
		}
		fmt.Fprintf(c.talk, "rein: %s\n", termsafe.Line(c.usage()))
	}
	c.mu.Lock()
	c.before = res
	c.mu.Unlock()
	msg, ok := c.ask(ctx)
	if !ok && ctx.Err() == nil {
		c.left = true
	}
	return msg, ok
}

// turnStop says why a turn stopped early and what the user can do.
func turnStop(res agent.Result, l budget.Limits) string {
	why := string(res.Stop)
	if res.Err != nil {
		why = res.Err.Error()
	}
	var ex *budget.ExceededError
	switch {
	case res.Stop == agent.StopAborted:
		return "cancelled; nothing more runs in it. Type your next message"
	case res.Stop == agent.StopMaxSteps:
		return fmt.Sprintf("%s (the per-turn cap, --max-steps %d). Say \"go on\" to continue, or raise --max-steps", why, l.MaxSteps)
	case errors.As(res.Err, &ex) && ex.Limit == budget.ToolCalls:
		return fmt.Sprintf("%s (the per-turn cap, --max-tool-calls %d). Say \"go on\" to continue, or raise --max-tool-calls", why, l.MaxToolCalls)
	case res.Stop == agent.StopTimeout:
		return fmt.Sprintf("the turn ran longer than --timeout %s. Say \"go on\" to continue, or raise --timeout", l.MaxWall)
	case errors.Is(res.Err, agent.ErrModelCall):
		return why + ". Check the key, --base-url and the network, then type your message again"
	}
	return why
}

// usage is the line of tokens and cost: the last turn's and the
// conversation's, against their caps.
func (c *chat) usage() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, before := c.last, c.before
	if last.Tokens < before.Tokens { // no turn since
		before = agent.Result{}
	}
	capOf := func(n int64) string {
		if n <= 0 {
			return "no cap"
		}
		return fmt.Sprint(n)
	}
	s := fmt.Sprintf("turn %d: %d steps of %s, %d tool calls of %s, %d tokens; conversation: %d tokens of %s",
		c.turn, last.Steps-before.Steps, capOf(int64(c.limits.MaxSteps)), last.ToolCalls-before.ToolCalls, capOf(int64(c.limits.MaxToolCalls)),
		last.Tokens-before.Tokens, last.Tokens, capOf(c.limits.MaxTokens))
	if c.p.pricing.known {
		costCap := "no cap"
		if c.limits.MaxCostUSD > 0 {
			costCap = fmt.Sprintf("$%.2f", c.limits.MaxCostUSD)
		}
		s += fmt.Sprintf(", $%.4f of %s", last.CostUSD, costCap)
	}
	return s
}

// ask prompts "You: " and returns the user's next message: a line, or
// lines joined by a trailing backslash or pasted at once. Slash commands
// are answered here. On a terminal it first fences the input, so only what
// is typed after the prompt counts; otherwise it echoes what it read. ok is
// false when the user leaves, the input ended, or ctx ended.
func (c *chat) ask(ctx context.Context) (msg string, ok bool) {
	for {
		text, err := c.readMessage(ctx)
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil { // an ended ctx was said already (the signal's line)
				fmt.Fprintf(c.talk, "\nrein: %s\n", termsafe.Line(err.Error()))
			} else if c.ui == nil {
				fmt.Fprintln(c.talk)
			}
			return "", false
		}
		text = strings.TrimSpace(text)
		if isCommand(text) {
			if leave := c.command(text); leave {
				return "", false
			}
			continue
		}
		if text != "" {
			return text, true
		}
	}
}

// readMessage reads the next message: with the line editor on a
// terminal, else as plain lines.
func (c *chat) readMessage(ctx context.Context) (string, error) {
	if c.ui != nil {
		return c.edit(ctx)
	}
	if c.tty {
		discarded, err := c.p.lines.Fence()
		if err != nil {
			return "", err
		}
		if discarded {
			fmt.Fprintln(c.talk, "rein: discarded what was typed before this prompt")
		}
	}
	fmt.Fprint(c.talk, "You: ")
	return c.read(ctx)
}

// read reads one message: a line, and more lines while one ends in a
// backslash. Lines that arrive together are not joined as a paste: in line
// mode a paste cannot be told from type-ahead, which must never become a
// message (bracketed paste needs the terminal in raw mode).
func (c *chat) read(ctx context.Context) (string, error) {
	var b strings.Builder
	for {
		line, err := c.p.lines.Next(ctx, 0)
		if err != nil {
			if b.Len() > 0 && errors.Is(err, io.EOF) {
				return b.String(), nil
			}
			return "", err
		}
		if !c.tty {
			fmt.Fprintln(c.talk, termsafe.Line(line))
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			b.WriteString(cont + "\n")
			if !c.tty {
				continue
			}
			fmt.Fprint(c.talk, "...  ")
			continue
		}
		b.WriteString(line)
		return b.String(), nil
	}
}

// commands are the slash commands the chat answers itself.
var commands = []string{"/help", "/cost", "/tools", "/mode", "/undo", "/audit", exitCommand, "/quit"}

// isCommand reports whether text is for rein, not the model: a known
// command with or without words after it, or one word starting with a
// slash (a mistyped command is not sent to the model).
func isCommand(text string) bool {
	if !strings.HasPrefix(text, "/") || strings.Contains(text, "\n") {
		return false
	}
	name, _, more := strings.Cut(text, " ")
	return slices.Contains(commands, name) || !more
}

// command answers a slash command; leave is true for /exit.
func (c *chat) command(line string) (leave bool) {
	name, _, _ := strings.Cut(line, " ")
	w := c.talk
	switch name {
	case exitCommand, "/quit":
		return true
	case "/help":
		fmt.Fprintln(w, helpText)
	case "/cost":
		fmt.Fprintf(w, "rein: %s\n", termsafe.Line(c.usage()))
	case "/tools":
		names := c.p.opts.Allow
		if len(names) == 0 {
			names = knownTools().Names()
		}
		fmt.Fprintf(w, "rein: tools the model may call: %s\n", termsafe.Line(strings.Join(names, ", ")))
	case "/mode":
		fmt.Fprintf(w, "rein: mode %s, sandbox %s, work dir %s (start rein again with --mode or --sandbox to change them)\n",
			termsafe.Line(modeName(string(c.p.opts.Mode))), termsafe.Line(sandboxName(c.p.opts.Sandbox.Backend)), termsafe.Line(c.p.opts.WorkDir))
	case "/audit":
		c.mu.Lock()
		id := c.session
		c.mu.Unlock()
		if id == "" {
			fmt.Fprintln(w, "rein: no session yet: the first message starts it")
			break
		}
		fmt.Fprintf(w, "rein: audit log %s (rein audit show %s)\n", termsafe.Line(audit.FileName(c.auditDir, id)), termsafe.Line(id))
	case "/undo":
		changes := c.book.Undo()
		if len(changes) == 0 {
			fmt.Fprintln(w, "rein: nothing to undo: the last turn changed no file through the file tools")
			break
		}
		for _, ch := range changes {
			if ch.Err != nil {
				fmt.Fprintf(w, "rein: undo: kept %s: %s\n", termsafe.Line(ch.Path), termsafe.Line(ch.Err.Error()))
				continue
			}
			fmt.Fprintf(w, "rein: undo: %s %s\n", termsafe.Line(ch.Action), termsafe.Line(ch.Path))
		}
	default:
		fmt.Fprintf(w, "rein: unknown command %s%s: /help lists them\n", termsafe.Line(name), termsafe.Line(didYouMean(name, commands)))
	}
	return false
}

func sandboxName(b string) string {
	if b == "" {
		return "auto"
	}
	return b
}

// questionAsker puts the model's ask_question to the person at the
// terminal; the answer is the user's own words.
type questionAsker struct {
	lines   *approve.Lines
	out     io.Writer
	timeout time.Duration
	// answered, when set, is told the answer's line ended (rein chat's
	// spinner may come back).
	answered func()
}

func (a questionAsker) Ask(ctx context.Context, question string) (string, error) {
	fmt.Fprintf(a.out, "\nrein: the agent asks: %s\n", termsafe.Text(question))
	if _, err := a.lines.Fence(); err != nil {
		return "", err
	}
	fmt.Fprint(a.out, "Your answer (Enter alone: no answer): ")
	answer, err := a.lines.Next(ctx, a.timeout)
	if a.answered != nil {
		a.answered()
	}
	return answer, err
}

// didYouMean is " (did you mean /x?)" when a command is close to name.
func didYouMean(name string, names []string) string {
	if near, ok := closest(name, names); ok {
		return fmt.Sprintf(" (did you mean %s?)", near)
	}
	return ""
}
