package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/mcp/gateway"
)

// mcpProxyCmd is rein between an MCP host and its servers.
type mcpProxyCmd struct {
	mcpConfigFlags  `embed:""`
	HTTP            string        `name:"http" placeholder:"ADDR" help:"Serve streamable HTTP on this loopback address (like 127.0.0.1:8931) instead of stdio; hosts must send Authorization: Bearer TOKEN, the token being $REIN_MCP_TOKEN or, unset, one printed at start."`
	AuditDir        string        `placeholder:"DIR" help:"Directory for the audit logs, one per host session (default audit.dir from config, else $XDG_STATE_HOME/rein/audit)."`
	Idle            time.Duration `default:"30m" help:"Over HTTP, close a host session after this long without a request."`
	ApprovalTimeout time.Duration `name:"approval-timeout" default:"120s" placeholder:"DURATION" help:"How long a question to the human (through the host, or at this terminal) waits; no answer in time is No."`
}

func (c *mcpProxyCmd) Run(ctx context.Context, e env) error {
	cfg, err := c.load()
	if err != nil {
		return err
	}
	dir, err := auditDir(c.AuditDir, cfg)
	if err != nil {
		return err
	}
	if c.HTTP != "" {
		if err := gateway.CheckLoopback(c.HTTP); err != nil {
			return usageError{err}
		}
	}
	// The human behind the gateway, when the host cannot ask: over stdio,
	// stdin is the host's channel, so only the controlling terminal; over
	// HTTP, stdin when it is a terminal.
	in, closeIn := c.humanInput(e)
	defer closeIn()
	var fallback approve.Approver
	var asker approve.Asker
	if in != nil {
		lines := approve.NewLines(in)
		defer lines.Close()
		fallback = approve.Terminal(lines, e.stderr, true, c.ApprovalTimeout)
		asker = lineAsker{lines: lines, out: e.stderr, timeout: c.ApprovalTimeout}
	}
	opts := optionsOf(cfg, nil)
	workdir, err := checkWorkdir(c.Workdir)
	if err != nil {
		return err
	}
	opts.WorkDir, opts.AuditDir = workdir, dir
	connect, closeSandbox, err := mcpSandbox(ctx, cfg, workdir, nil) // upstreams are shared by the host sessions: no one log
	if err != nil {
		return err
	}
	defer closeSandbox()
	connect.Builtin = knownTools().Names()
	g, err := gateway.New(gateway.Options{
		MCP: cfg.MCP, Connect: connect, Guard: opts,
		Fallback: fallback, FallbackAsker: asker, AskTimeout: c.ApprovalTimeout,
		Notice: func(s string) { fmt.Fprintf(e.stderr, "rein: %s\n", termsafe.Line(s)) },
	})
	if err != nil {
		return usageError{err}
	}
	defer g.Wait()
	if c.HTTP == "" {
		return g.Serve(ctx, &sdk.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
	}
	token := os.Getenv("REIN_MCP_TOKEN")
	printed := token == ""
	if printed {
		token = gateway.NewToken()
	}
	h, err := g.Handler(ctx, token, c.Idle)
	if err != nil {
		return usageError{err}
	}
	ln, err := net.Listen("tcp", c.HTTP)
	if err != nil {
		return fmt.Errorf("--http %s: %w", c.HTTP, err)
	}
	fmt.Fprintf(e.stderr, "rein: MCP gateway at http://%s/ (streamable HTTP)\n", termsafe.Line(ln.Addr().String()))
	if printed {
		fmt.Fprintf(e.stderr, "rein: bearer token (give it to your MCP host; set REIN_MCP_TOKEN to choose one): %s\n", termsafe.Line(token))
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// humanInput is where the human behind the gateway answers, or nil.
func (c *mcpProxyCmd) humanInput(e env) (io.Reader, func()) {
	if c.HTTP != "" && isTerminal(e.stdin) {
		return e.stdin, func() {}
	}
	f, err := os.Open("/dev/tty")
	if err != nil || !isTerminal(f) {
		if f != nil {
			f.Close()
		}
		return nil, func() {}
	}
	return f, func() { f.Close() }
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
