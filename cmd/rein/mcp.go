package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/mcp"
	"github.com/reinhq/rein/sandbox"
)

type mcpCmd struct {
	List  mcpListCmd  `cmd:"" help:"Start the MCP servers of [mcp.servers] and list their tools: name, effect class, pin state, and why a tool is not offered. Pins nothing."`
	Pin   mcpPinCmd   `cmd:"" help:"Show how SERVER's tool definitions differ from the pinned ones and, after a yes, pin them."`
	Proxy mcpProxyCmd `cmd:"" help:"Serve the configured MCP servers' tools to an MCP host (stdio, or --http on loopback) through rein's gates, approvals and audit log."`
}

// mcpConfigFlags find the configuration the way rein run does.
type mcpConfigFlags struct {
	Workdir string `default:"." placeholder:"DIR" help:"Work directory whose .rein/config.toml applies (it may only disable or narrow servers)."`
	Config  string `placeholder:"FILE" help:"A config file applied after ~/.config/rein/config.toml and DIR/.rein/config.toml."`
}

func (f mcpConfigFlags) load() (config.Config, error) {
	workdir, err := filepath.Abs(f.Workdir)
	if err != nil {
		return config.Config{}, usagef("--workdir %s: %v", f.Workdir, err)
	}
	sources := []config.Source{{Path: config.UserFile()}, {Path: config.ProjectFile(workdir), Narrow: true, Caps: builtinCap}}
	if f.Config != "" {
		sources = append(sources, config.Source{Path: f.Config, Required: true})
	}
	cfg, err := config.Load(sources...)
	if err != nil {
		return cfg, usageError{err}
	}
	if len(cfg.MCP.Servers) == 0 {
		return cfg, usagef("no MCP servers are configured: add [mcp.servers.NAME] to %s (see docs/mcp.md)", config.UserFile())
	}
	return cfg, nil
}

type mcpListCmd struct {
	mcpConfigFlags `embed:""`
	JSON           bool `name:"json" help:"Print one JSON object per server, with every tool's report and definition."`
}

func (c *mcpListCmd) Run(ctx context.Context, e env) error {
	cfg, err := c.load()
	if err != nil {
		return err
	}
	workdir, err := checkWorkdir(c.Workdir)
	if err != nil {
		return err
	}
	opts, closeSandbox, err := mcpSandbox(ctx, cfg, workdir, nil)
	if err != nil {
		return err
	}
	defer closeSandbox()
	opts.Builtin, opts.ReadOnlyPins = knownTools().Names(), true
	set, err := mcp.Connect(ctx, cfg.MCP, opts)
	if err != nil {
		return err
	}
	defer set.Close()
	if c.JSON {
		enc := json.NewEncoder(safeJSON{e.stdout})
		for _, s := range set.Servers() {
			if err := enc.Encode(s); err != nil {
				return err
			}
		}
		return nil
	}
	for _, s := range set.Servers() {
		fmt.Fprintf(e.stdout, "%s (%s)\n", termsafe.Line(s.Name), termsafe.Line(s.Transport))
		for _, t := range s.Tools {
			fmt.Fprintf(e.stdout, "  %-32s %-12s %-8s %s\n", termsafe.Line(t.Name), t.Effect, t.Pin, termsafe.Line(availability(t)))
			for _, f := range t.Findings {
				fmt.Fprintf(e.stdout, "      %s\n", termsafe.Line(f.String()))
			}
		}
	}
	fmt.Fprintln(e.stdout, "\nPin states: new (pinned at its first use by rein run), pinned (as approved), changed (not offered until rein mcp pin SERVER).")
	return nil
}

func availability(t mcp.ToolReport) string {
	if t.Available {
		return "offered"
	}
	return "NOT OFFERED: " + t.Reason
}

type mcpPinCmd struct {
	Server         string `arg:"" help:"The server whose definitions to pin."`
	Yes            bool   `help:"Pin without asking (after showing the differences)."`
	mcpConfigFlags `embed:""`
}

func (c *mcpPinCmd) Run(ctx context.Context, e env) error {
	cfg, err := c.load()
	if err != nil {
		return err
	}
	sc, ok := cfg.MCP.Servers[c.Server]
	if !ok {
		return usagef("no MCP server %q is configured", c.Server)
	}
	sc.Disabled = false
	workdir, err := checkWorkdir(c.Workdir)
	if err != nil {
		return err
	}
	cfg.MCP = config.MCP{Servers: map[string]config.MCPServer{c.Server: sc}}
	opts, closeSandbox, err := mcpSandbox(ctx, cfg, workdir, nil)
	if err != nil {
		return err
	}
	defer closeSandbox()
	opts.Builtin, opts.ReadOnlyPins = knownTools().Names(), true
	set, err := mcp.Connect(ctx, cfg.MCP, opts)
	if err != nil {
		return err
	}
	defer set.Close()
	var pending []mcp.ToolReport
	for _, s := range set.Servers() {
		for _, t := range s.Tools {
			if t.Pin != mcp.PinMatch {
				pending = append(pending, t)
			}
		}
	}
	if len(pending) == 0 {
		fmt.Fprintf(e.stdout, "every tool of %s is pinned as it is\n", termsafe.Line(c.Server))
		return nil
	}
	for _, t := range pending {
		fmt.Fprintf(e.stdout, "%s (%s):\n", termsafe.Line(t.Name), t.Pin)
		for _, l := range lineDiff(pretty(t.Pinned), pretty(t.Definition)) {
			fmt.Fprintf(e.stdout, "  %s\n", termsafe.Line(shown(l)))
		}
		for _, f := range t.Findings {
			fmt.Fprintf(e.stdout, "  finding (the tool stays unavailable while it holds): %s\n", termsafe.Line(f.String()))
		}
	}
	if !c.Yes {
		lines := approve.NewLines(e.stdin)
		defer lines.Close()
		if !isTerminal(e.stdin) {
			return usagef("not a terminal: nothing pinned; read the differences above and pass --yes to pin them")
		}
		_, _ = lines.Fence()
		fmt.Fprintf(e.stderr, "rein: pin these %d definition(s) of %s? [y/N] ", len(pending), termsafe.Line(c.Server))
		line, _ := lines.Next(ctx, approve.DefaultTimeout)
		if !approve.Yes(line) {
			fmt.Fprintln(e.stderr, "rein: nothing pinned")
			return exitCode(exitStopped)
		}
	}
	pinned, err := set.Approve(c.Server)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "pinned: %s\n", termsafe.Line(strings.Join(pinned, ", ")))
	return nil
}

// pretty indents a canonical definition for reading; nil is "".
func pretty(def json.RawMessage) []string {
	if len(def) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := json.Indent(&b, def, "", "  "); err != nil {
		return []string{string(def)}
	}
	return strings.Split(b.String(), "\n")
}

// shown writes every character of s that is not visible (format and
// control characters, zero-width ones, Unicode tags) as an escape, so a
// difference hidden in them is seen.
func shown(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ' ' || (unicode.IsGraphic(r) && !unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.Variation_Selector, r)):
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, "\\U%08x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// lineDiff is a line diff of a and b (longest common subsequence): kept
// lines start with "  ", removed ones with "- ", added ones with "+ ".
func lineDiff(a, b []string) []string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	return out
}

// mcpEgressWho names the MCP servers' connections in the audit log.
const mcpEgressWho = "(mcp servers)"

// connectMCP starts the session's MCP servers, the stdio ones in the
// session's sandbox backend (mcpSandbox), and says on stderr which run
// unsandboxed and which tools are not offered and why. With no servers
// configured it returns an empty set. The returned func closes the set,
// then the servers' sandbox (and its egress proxy); it is elog's Drain
// too, so the session calls it before its audit log closes, and calling
// it again does nothing.
func connectMCP(ctx context.Context, e env, cfg config.Config, workdir string, asker approve.Asker, elog *guarded.EgressLog) (*mcp.Set, func(), error) {
	opts, closeSandbox, err := mcpSandbox(ctx, cfg, workdir, elog)
	if err != nil {
		return nil, nil, fmt.Errorf("refusing to start: %w", err)
	}
	opts.Builtin, opts.Asker = knownTools().Names(), asker
	set, err := mcp.Connect(ctx, cfg.MCP, opts)
	if err != nil {
		closeSandbox()
		return nil, nil, fmt.Errorf("refusing to start: %w", err)
	}
	for _, s := range unsandboxed(set) {
		fmt.Fprintf(e.stderr, "rein: MCP server %s runs UNSANDBOXED with your rights; its tools' effects are judged by their effect class\n", termsafe.Line(s))
	}
	for _, t := range set.Unavailable() {
		fmt.Fprintf(e.stderr, "rein: MCP tool %s is not offered: %s\n", termsafe.Line(t.Name), termsafe.Line(t.Reason))
	}
	closeAll := sync.OnceFunc(func() {
		_ = set.Close()
		closeSandbox()
	})
	if elog != nil {
		elog.Drain = closeAll
	}
	return set, closeAll, nil
}

// mcpSandbox is where stdio MCP servers run: the landlock sandbox, with
// the session's work dir (read-only to them), memory limit and network
// policy ([sandbox.network]: its egress proxy, or no network), unless the
// session runs with --sandbox none (then they run unsandboxed, announced
// and recorded). Where landlock does not work, a server starts only if its
// config says unsandboxed = true: the reason is in the error of one that
// does not. The docker backend does not hold servers: they run in
// landlock where it works. The proxy's connections go to elog (nil: not
// recorded). Call the func returned when the servers are closed.
func mcpSandbox(ctx context.Context, cfg config.Config, workdir string, elog *guarded.EgressLog) (mcp.Options, func(), error) {
	noop := func() {}
	if cfg.Sandbox.Backend == guarded.SandboxNone {
		return mcp.Options{NoSandbox: true}, noop, nil
	}
	if !slices.ContainsFunc(slices.Collect(maps.Values(cfg.MCP.Servers)), func(s config.MCPServer) bool {
		return !s.Disabled && s.Command != "" && !s.Unsandboxed
	}) {
		return mcp.Options{}, noop, nil // nothing to hold: no sandbox to prepare
	}
	mem, err := sandbox.ParseMemory(cfg.Sandbox.Memory)
	if err != nil {
		return mcp.Options{}, nil, fmt.Errorf("sandbox memory: %w", err)
	}
	l := &sandbox.Landlock{WorkDir: workdir, Memory: mem, Helper: sandboxHelper()}
	if e := egressOf(cfg); e != nil {
		if os.Geteuid() != 0 {
			return mcp.Options{WhyNoSandbox: errors.New("[sandbox.network] allow needs rein to run as root")}, noop, nil
		}
		if elog != nil {
			e.Record = elog.Record // the servers' connections, in the session's audit log
		}
		p, err := egress.New(*e)
		if err != nil {
			return mcp.Options{}, nil, err
		}
		l.Net, l.Egress = sandbox.NetProxy, p
	}
	if err := l.Prepare(ctx); err != nil {
		_ = l.Close()
		return mcp.Options{WhyNoSandbox: err}, noop, nil
	}
	return mcp.Options{Sandbox: l}, func() { _ = l.Close() }, nil
}

// unsandboxed names the stdio servers of set that run with the user's
// rights, with their command, for the announcement and the session's start
// record.
func unsandboxed(set *mcp.Set) []string {
	var out []string
	for _, s := range set.Servers() {
		if strings.HasPrefix(s.Transport, "stdio: ") && !s.Sandboxed {
			out = append(out, s.Name+" ("+s.Transport+")")
		}
	}
	return out
}

// lineAsker puts a question (a server's elicitation) to the human at the
// terminal; without one, nobody answers.
type lineAsker struct {
	lines   *approve.Lines
	out     io.Writer
	timeout time.Duration
}

func (a lineAsker) Ask(ctx context.Context, question string) (string, error) {
	if _, err := a.lines.Fence(); err != nil {
		return "", err
	}
	fmt.Fprintf(a.out, "\nrein: %s", termsafe.Text(question))
	return a.lines.Next(ctx, a.timeout)
}

// askerFor is the session's asker: the terminal's, or nobody.
func askerFor(p *prepared, e env, timeout time.Duration) approve.Asker {
	if p.asker != nil {
		return p.asker
	}
	if !p.tty {
		return approve.Unanswered{}
	}
	return lineAsker{lines: p.lines, out: e.stderr, timeout: timeout}
}
