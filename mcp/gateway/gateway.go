// Package gateway puts rein between any MCP host (an editor, a desktop
// assistant, another agent) and the MCP servers it uses: it is itself an
// MCP server, over stdio or streamable HTTP on loopback, that offers the
// upstream servers' tools (as package mcp judges them: pinned, scanned,
// classified) and judges every call with the gate pipeline of the public
// guarded assembly (agent/guarded.Pipeline): allowlist, schema, scope,
// shell and network checks on the arguments, effect classes, per-session
// limits, the data-flow gate fed with the results that pass through, then
// approval. An approval is asked of the host's human through MCP
// elicitation when the host supports it, else of the fallback approver
// (rein's terminal, or no one: refused). Every call is recorded in rein's
// hash-chained audit log, one session (and one log) per host connection,
// so `rein audit show` tells afterwards what the host's agent did and
// what was refused.
//
// Each host connection gets its own upstream connections (its own stdio
// server processes): one host's session cannot see another's state, and
// a server's elicitation goes to the host whose call caused it.
// Upstream credentials are the gateway's (package mcp fills headers from
// rein's environment); nothing the host sends, its bearer token included,
// is passed upstream but the call's name and arguments.
//
// What it cannot see: the host's conversation (the user's task, so the
// data-flow gate treats every value a tool result supplied as untrusted
// and cannot tell the user also typed it), what the host does with a
// result, and what a server does with a call.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/agent/stop"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/flow"
	"github.com/reinhq/rein/mcp"
	"github.com/reinhq/rein/secret"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
)

// Options configure a gateway.
type Options struct {
	// MCP is the upstream servers, as in rein's config.
	MCP config.MCP
	// Connect reaches them (pin file, environment for credentials,
	// transports in tests). Its Asker is replaced per host session.
	Connect mcp.Options
	// Guard configures the gates as for a guarded session: WorkDir (the
	// scope a path argument must stay in; required), Mode, Rules,
	// ToolLimits, Flow, NetAllow, Protected, AuditDir, Durability, Environ
	// (redacted from results and the log). Model, Tools and the approver
	// are the gateway's own and ignored here.
	Guard guarded.Options
	// Fallback is asked when the host cannot elicit; nil refuses.
	Fallback approve.Approver
	// FallbackAsker answers an upstream server's elicitation when the
	// host cannot elicit; nil declines it.
	FallbackAsker approve.Asker
	// AskTimeout is how long a question to the host's human waits for
	// its answer (then: no); 0 is approve.DefaultTimeout.
	AskTimeout time.Duration
	// Notice, when set, is told what an operator should know (a session
	// opened or closed, and where its audit log is).
	Notice func(string)
}

// Gateway serves hosts. It holds no host's state: each connection is a
// session of its own.
type Gateway struct {
	opts Options
	wg   sync.WaitGroup // sessions being closed
}

// New checks opts.
func New(opts Options) (*Gateway, error) {
	if opts.Guard.WorkDir == "" {
		return nil, errors.New("gateway: Guard.WorkDir is required: the directory the scope gate keeps path arguments in")
	}
	dir, err := filepath.Abs(opts.Guard.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("gateway: work dir: %w", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("gateway: work dir %s is not a directory", dir)
	}
	opts.Guard.WorkDir = dir
	if opts.Guard.AuditDir == "" {
		if opts.Guard.AuditDir, err = audit.DefaultDir(); err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
	}
	enabled := 0
	for _, s := range opts.MCP.Servers {
		if !s.Disabled {
			enabled++
		}
	}
	if enabled == 0 {
		return nil, errors.New("gateway: no MCP server is configured: add [mcp.servers.NAME] (see docs/mcp.md)")
	}
	return &Gateway{opts: opts}, nil
}

// Serve serves one host over t (stdio: sdk.StdioTransport) until the host
// disconnects or ctx ends. An upstream server that cannot start is an
// error before anything is served.
func (g *Gateway) Serve(ctx context.Context, t sdk.Transport) error {
	g.wg.Add(1) // Wait waits for this session's end too
	defer g.wg.Done()
	hs, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer hs.close()
	hs.served = true // Serve waits for the connection and closes the session itself
	srv := g.server(hs.set.Tools(), func(*sdk.ServerSession) (*hostSession, error) { return hs, nil })
	ss, err := srv.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	hs.bind(ss)
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = ss.Close()
		<-done
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) || ctx.Err() != nil {
		return nil
	}
	return err
}

// Wait waits until every session's upstream servers are stopped and
// its log closed.
func (g *Gateway) Wait() { g.wg.Wait() }

// hostSession is one host connection: its upstream servers, gates,
// ledger and audit log.
type hostSession struct {
	g      *Gateway
	id     string
	set    *mcp.Set
	reg    *tool.Registry
	pipe   *gate.Pipeline
	ledger *flow.Ledger
	log    *audit.Writer
	redact func(string) string

	ctx     context.Context // ends with the session: its calls stop
	stop    context.CancelFunc
	mu      sync.Mutex
	pending map[string]*pending

	onClose  func() // set before the session is shared
	served   bool   // Serve owns the connection: no watcher (set before it is shared)
	peer     atomic.Pointer[sdk.ServerSession]
	calls    atomic.Int64
	refused  atomic.Int64
	closeOne sync.Once
}

// open starts a host session: upstream servers, gates and audit log.
func (g *Gateway) open(ctx context.Context) (*hostSession, error) {
	o := g.opts
	hs := &hostSession{g: g, id: session.NewID(time.Now()), ledger: flow.NewLedger(), pending: map[string]*pending{}}
	hs.ctx, hs.stop = context.WithCancel(ctx)
	environ := o.Guard.Environ
	if environ == nil {
		environ = os.Environ()
	}
	hs.redact = secret.NewRedactor(environ).Redact
	co := o.Connect
	co.Asker = hostAsker{hs: hs}
	set, err := mcp.Connect(ctx, o.MCP, co)
	if err != nil {
		hs.stop()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	hs.set = set
	// The host's model reads the servers' descriptions: what they say is
	// the servers' word, judged by the data-flow gate as their results are.
	for _, t := range set.Tools() {
		if s := t.Spec(); s.UntrustedDescription {
			hs.ledger.Untrusted(s.Name, s.Description)
		}
	}
	gopts := o.Guard
	gopts.Tools, gopts.OnlyTools, gopts.ExactAllow, gopts.Allow = set.Tools(), true, false, nil
	gopts.Approver = hostApprover{hs: hs}
	if hs.reg, err = guarded.Tools(gopts); err != nil {
		set.Close()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if hs.pipe, err = guarded.Pipeline(gopts, hs.ledger); err != nil {
		set.Close()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	hs.log, err = audit.Create(o.Guard.AuditDir, hs.id, audit.WithDurability(o.Guard.Durability), audit.WithRedactor(hs.redact))
	if err != nil {
		set.Close()
		return nil, fmt.Errorf("gateway: audit log: %w", err)
	}
	meta, _ := json.Marshal(map[string]any{
		"gateway": true, "work_dir": gopts.WorkDir, "mode": gopts.Mode, "flow": gopts.Flow,
		"servers": set.Servers(), "tools": set.Names(),
	})
	if err := hs.log.Write(audit.Record{Type: audit.SessionStart, Task: "rein mcp proxy: a host's session (its tool calls, judged by rein's gates)", Config: meta}); err != nil {
		hs.log.Close()
		set.Close()
		return nil, fmt.Errorf("gateway: audit log: %w", err)
	}
	g.notice("session %s opened: %d tool(s) offered; audit log %s", hs.id, len(set.Tools()), hs.log.Path())
	for _, s := range set.Servers() {
		if strings.HasPrefix(s.Transport, "stdio: ") && !s.Sandboxed {
			g.notice("session %s: MCP server %s (%s) runs UNSANDBOXED with your rights", hs.id, s.Name, s.Transport)
		}
	}
	for _, u := range set.Unavailable() {
		g.notice("session %s: %s is not offered: %s", hs.id, u.Name, u.Reason)
	}
	return hs, nil
}

// server is the MCP server a host talks to: it offers tools and hands
// each call to the host session that session(ss) finds for the host's
// connection.
func (g *Gateway) server(tools []tool.Tool, session func(*sdk.ServerSession) (*hostSession, error)) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "rein-gateway", Version: "1"}, &sdk.ServerOptions{
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
		InitializedHandler: func(_ context.Context, req *sdk.InitializedRequest) {
			if hs, err := session(req.Session); err == nil {
				hs.bind(req.Session)
			}
		},
	})
	handle := func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		hs, err := session(req.Session)
		if err != nil {
			return errResult("rein: " + err.Error()), nil
		}
		return hs.handle(ctx, req)
	}
	for _, t := range tools {
		spec := t.Spec()
		srv.AddTool(&sdk.Tool{Name: spec.Name, Description: spec.Description, InputSchema: spec.Schema, Annotations: annotations(spec.Effect)}, handle)
	}
	return srv
}

// annotations tell the host rein's effect class (a host may show it).
func annotations(e tool.Effect) *sdk.ToolAnnotations {
	f := false
	t := true
	switch e {
	case tool.ReadOnly:
		return &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &f}
	case tool.Reversible:
		return &sdk.ToolAnnotations{DestructiveHint: &f}
	}
	return &sdk.ToolAnnotations{DestructiveHint: &t}
}

func (g *Gateway) askTimeout() time.Duration {
	if g.opts.AskTimeout > 0 {
		return g.opts.AskTimeout
	}
	return approve.DefaultTimeout
}

func (g *Gateway) notice(format string, args ...any) {
	if g.opts.Notice != nil {
		g.opts.Notice(fmt.Sprintf(format, args...))
	}
}

// bind remembers the host's connection, to elicit through it, and
// closes the session when that connection ends.
func (hs *hostSession) bind(ss *sdk.ServerSession) {
	if ss == nil || !hs.peer.CompareAndSwap(nil, ss) || hs.served {
		return
	}
	hs.g.wg.Add(1)
	go func() { // ends when the host's connection does
		defer hs.g.wg.Done()
		_ = ss.Wait()
		hs.close()
	}()
}

// close records the session's end, closes its log and stops its servers.
func (hs *hostSession) close() {
	hs.closeOne.Do(func() {
		hs.stop()
		n := hs.calls.Load()
		_ = hs.log.Write(audit.Record{Type: audit.Stop, Stop: stop.Done, ToolCalls: int(n),
			Answer: fmt.Sprintf("the host disconnected after %d call(s), %d refused", n, hs.refused.Load())})
		_ = hs.log.Close()
		_ = hs.set.Close()
		if hs.onClose != nil {
			hs.onClose()
		}
		hs.g.notice("session %s closed: %d call(s), %d refused", hs.id, n, hs.refused.Load())
	})
}

// handle serves one tools/call of the host's. The call runs in a
// goroutine of its own (a suspended call) so that a question it needs
// answered by the host's human (an approval, an upstream server's
// elicitation) can go to the host the way the protocol asks a server to:
// an input-required result, which the host answers by calling again with
// the answers and the call's state (SEP-2322; for hosts of older
// protocol versions, the SDK turns it into an elicitation request).
func (hs *hostSession) handle(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	hs.bind(req.Session)
	if state := req.Params.RequestState; state != "" {
		p := hs.suspended(state)
		if p == nil {
			return errResult("rein: this call's state is unknown or expired (its question was not answered in time); call the tool again"), nil
		}
		if !hs.answer(p, req.Params.InputResponses) {
			return errResult("rein: the answer does not match rein's question; call the tool again"), nil
		}
		return hs.wait(ctx, p)
	}
	caps := req.ClientCapabilities()
	p := hs.suspend(caps != nil && caps.Elicitation != nil)
	go func() {
		defer p.cancel()
		p.done <- hs.run(p.ctx, req.Params.Name, json.RawMessage(req.Params.Arguments))
	}()
	return hs.wait(ctx, p)
}

// outcome is what a suspended call ends with.
type outcome struct {
	res *sdk.CallToolResult
	err error
}

// run judges one call and, when allowed, runs it upstream: verdict,
// intent and result are recorded as the loop records a model's call, and
// the result feeds the data-flow ledger.
func (hs *hostSession) run(ctx context.Context, name string, args json.RawMessage) outcome {
	if len(strings.TrimSpace(string(args))) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	n := hs.calls.Add(1)
	id := fmt.Sprintf("host-%d", n)
	t, _ := hs.reg.Lookup(name)
	hs.ledger.Arguments(t, args) // the host's own words
	call := &gate.Call{ID: id, Name: name, Args: args, Tool: t}
	v := hs.pipe.Decide(ctx, call)
	if v.Decision == gate.Allow && t == nil {
		v = gate.UnknownTool(name)
	}
	rec := audit.Record{Step: int(n), CallID: id, Tool: name, Args: args,
		Type: audit.Verdict, Decision: audit.DecisionOf(v.Decision), Gate: v.Gate, Reason: v.Reason}
	if v.Decision != gate.Allow {
		rec.Content = "rein refused this call: " + v.ForModel()
	}
	if err := hs.log.Write(rec); err != nil {
		return outcome{err: fmt.Errorf("rein: the audit log cannot be written, so nothing runs: %w", err)}
	}
	if v.Decision != gate.Allow {
		hs.refused.Add(1)
		return outcome{res: errResult(rec.Content)}
	}
	effect := call.Effect(ctx)
	intent := audit.Record{Type: audit.Intent, Step: int(n), CallID: id, Tool: name, Args: args, Effect: audit.EffectOf(effect)}
	if effect != tool.ReadOnly {
		intent.Key = agent.IdempotencyKey(hs.id, id, name, args)
	}
	if err := hs.log.Write(intent); err != nil {
		return outcome{err: fmt.Errorf("rein: the audit log cannot be written, so nothing runs: %w", err)}
	}
	began := time.Now()
	out, err := t.Run(ctx, args)
	took := time.Since(began)
	hs.pipe.Ran(call)
	isErr := err != nil
	if isErr {
		out = "Error: " + err.Error()
	}
	out = hs.redact(out)
	if !isErr {
		hs.ledger.Untrusted(name, out)
	}
	clipped, size, sum, cut := audit.Clip(out, clipResults)
	if err := hs.log.Write(audit.Record{Type: audit.Result, Step: int(n), CallID: id, Tool: name, Key: intent.Key,
		Content: clipped, IsError: isErr, Bytes: size, SHA256: sum, Truncated: cut, DurationMS: float64(took.Microseconds()) / 1000}); err != nil {
		return outcome{err: fmt.Errorf("rein: the audit log cannot be written: %w", err)}
	}
	if isErr {
		return outcome{res: errResult(out)}
	}
	return outcome{res: &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out}}}}
}

func errResult(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// clipResults is how much of a result the audit log keeps (with its full
// size and SHA-256), as the loop's default.
const clipResults = 4096
