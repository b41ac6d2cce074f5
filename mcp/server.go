package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/sandbox"
)

// server is one connected MCP server.
type server struct {
	name      string
	cfg       config.MCPServer
	transport string // for reports: "stdio: …", "http: …", "custom"
	cs        *sdk.ClientSession
	gone      chan struct{} // closed when cs has ended
	asker     approve.Asker
	proc      *process // nil unless rein started the server
	pinFile   string

	stale atomic.Bool // the server said its tool list changed

	mu       sync.Mutex
	accepted map[string]string // MCP tool name → digest of the definition offered
	changed  map[string]bool   // tools whose definition changed during the session
}

const defaultMaxMessage = 8 << 20

// dial connects to one server and initialises the session.
func dial(ctx context.Context, name string, sc config.MCPServer, opts Options, pinFile string) (*server, error) {
	s := &server{name: name, cfg: sc, asker: opts.Asker, pinFile: pinFile,
		accepted: map[string]string{}, changed: map[string]bool{}}
	client := sdk.NewClient(&sdk.Implementation{Name: "rein", Version: "1"}, &sdk.ClientOptions{
		// No roots (the work dir is not the server's business) and no
		// sampling (a server may not drive rein's model): only the
		// elicitation rein puts to the human.
		Capabilities: &sdk.ClientCapabilities{
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}},
		},
		ElicitationHandler:     s.elicit,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.stale.Store(true) },
	})
	var tr sdk.Transport
	if opts.NewTransport != nil {
		tr = opts.NewTransport(name)
	}
	switch {
	case opts.Transports[name] != nil:
		tr, s.transport = opts.Transports[name], "custom"
	case tr != nil:
		s.transport = "custom"
	case sc.Command != "":
		p, err := startProcess(ctx, name, sc, opts)
		if err != nil {
			return nil, err
		}
		s.proc = p
		tr, s.transport = p.transport, "stdio: "+strings.Join(append([]string{sc.Command}, sc.Args...), " ")
	default:
		hc, err := httpClient(name, sc, opts.environ())
		if err != nil {
			return nil, err
		}
		tr = &sdk.StreamableClientTransport{Endpoint: sc.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
		s.transport = "http: " + sc.URL
	}
	cctx, cancel := context.WithTimeout(ctx, sc.StartTimeout())
	defer cancel()
	cs, err := client.Connect(cctx, tr, nil)
	if err != nil {
		err = s.explain(cctx, ctx, sc.StartTimeout(), err)
		if s.proc != nil {
			s.proc.stop()
		}
		return nil, err
	}
	s.cs, s.gone = cs, make(chan struct{})
	go func() { // owned by s: ends when the session does, waited for by close
		_ = cs.Wait()
		close(s.gone)
	}()
	return s, nil
}

// list returns every tool the server offers, page by page.
func (s *server) list(ctx context.Context) ([]*sdk.Tool, error) {
	lctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout())
	defer cancel()
	var tools []*sdk.Tool
	for t, err := range s.cs.Tools(lctx, nil) {
		if err != nil {
			return nil, s.explain(lctx, ctx, s.cfg.StartTimeout(), err)
		}
		tools = append(tools, t)
		if len(tools) > 10_000 {
			return nil, errors.New("the server lists more than 10,000 tools")
		}
	}
	return tools, nil
}

// accept records the definition offered for a tool.
func (s *server) accept(name string, def []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accepted[name] = digest(def)
}

// refresh lists the tools again when the server said its list changed:
// a tool whose definition is no longer the one offered (or that is gone)
// is unavailable for the rest of the session.
func (s *server) refresh(ctx context.Context) error {
	if !s.stale.Swap(false) {
		return nil
	}
	tools, err := s.list(ctx)
	if err != nil {
		s.stale.Store(true) // try again next time
		return err
	}
	now := map[string]string{}
	for _, t := range tools {
		if def, err := canonical(t); err == nil {
			now[t.Name] = digest(def)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, d := range s.accepted {
		if now[name] != d {
			s.changed[name] = true
		}
	}
	return nil
}

func (s *server) isChanged(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed[name]
}

// call calls a tool with the server's per-call timeout.
func (s *server) call(ctx context.Context, name string, args []byte) (*sdk.CallToolResult, error) {
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	res, err := s.cs.CallTool(cctx, &sdk.CallToolParams{Name: name, Arguments: rawArgs(args)})
	if err != nil {
		return nil, s.explain(cctx, ctx, s.cfg.CallTimeout(), err)
	}
	return res, nil
}

// explain turns a failed request into an error that says what happened:
// the caller's context ended (returned as it is), the server took too
// long, its connection is gone (with what it last wrote on stderr), or
// it answered with an error.
func (s *server) explain(cctx, parent context.Context, limit time.Duration, err error) error {
	switch {
	case parent.Err() != nil:
		return context.Cause(parent)
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: server %q took longer than %v; whether the call had an effect is unknown", ErrTimeout, s.name, limit)
	case errors.As(err, new(*jsonrpc.Error)) && !s.closed():
		return fmt.Errorf("server %q answered with an error: %w", s.name, err)
	case !errors.Is(err, sdk.ErrConnectionClosed) && !s.ending():
		return fmt.Errorf("server %q: %w", s.name, err)
	}
	// The transport failed (the process died, a message could not be
	// read or was too big): the connection is gone; say what the process
	// left behind.
	msg := fmt.Sprintf("%v: server %q", ErrServerGone, s.name)
	if s.proc != nil {
		if st := s.proc.status(); st != "" {
			msg += " " + st
		}
		if tail := s.proc.stderr.String(); tail != "" {
			msg += "; its last words on stderr: " + tail
		}
	}
	return fmt.Errorf("%s (%w); its tools cannot run for the rest of this session", msg, errors.Join(ErrServerGone, err))
}

// closed reports whether the session's connection has ended.
func (s *server) closed() bool {
	if s.gone == nil {
		return false
	}
	select {
	case <-s.gone:
		return true
	default:
		return false
	}
}

// ending reports whether the connection ends within a moment: a failed
// read (a message too big or malformed, a dead process) ends it, shortly
// after the call that saw the failure returned.
func (s *server) ending() bool {
	if s.gone == nil {
		return false
	}
	select {
	case <-s.gone:
		return true
	case <-time.After(2 * time.Second):
		return false
	}
}

// close ends the session, waits for its watcher, and stops the server's
// process. A server that ends badly on close has nothing left to say:
// close reports nothing.
func (s *server) close() error {
	if s.cs != nil {
		_ = s.cs.Close()
		<-s.gone
	}
	if s.proc != nil {
		s.proc.stop()
	}
	return nil
}

// httpClient is the client of a streamable HTTP server: rein's guarded
// network (the configured host is allowed even when internal; what it
// redirects to is judged), with the configured headers filled from the
// environment.
func httpClient(name string, sc config.MCPServer, environ []string) (*http.Client, error) {
	u, err := url.Parse(sc.URL)
	if err != nil {
		return nil, err
	}
	headers := http.Header{}
	for h, env := range sc.Headers {
		v, ok := lookupEnv(environ, env)
		if !ok || v == "" {
			return nil, fmt.Errorf("mcp.servers.%s.headers.%s names %s, which is not set: export it", name, h, env)
		}
		headers.Set(h, v)
	}
	pol := &netguard.Policy{Allow: []string{u.Host}, Timeout: sc.CallTimeout() + 30*time.Second, MaxRedirects: -1}
	hc := pol.Client()
	hc.Transport = withHeaders{next: hc.Transport, h: headers}
	return hc, nil
}

type withHeaders struct {
	next http.RoundTripper
	h    http.Header
}

func (w withHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range w.h {
		req.Header[k] = slices.Clone(v)
	}
	return w.next.RoundTrip(req)
}

func lookupEnv(environ []string, name string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// process is a stdio server rein started, in the sandbox or not.
type process struct {
	transport sdk.Transport
	stderr    *tail
	done      <-chan struct{} // closed when the process has been reaped
	exitErr   func() error    // how it ended, once done is closed
	kill      func()          // kills it and what it started, and waits for it
	cleanup   func()          // after kill: removes its own directory
	sandboxed bool
	stopOnce  sync.Once
}

// Sandbox starts a stdio server confined: *sandbox.Landlock does.
type Sandbox interface {
	Start(ctx context.Context, p sandbox.Program) (*sandbox.Process, error)
}

// serverEnv is a stdio server's environment: sandbox.ChildEnv of rein's
// (PATH, HOME, USER, LANG, LC_ALL, TERM=dumb, TMPDIR; no secret), the
// variables pass_env names, and env.
func serverEnv(sc config.MCPServer, environ []string) ([]string, error) {
	env := sandbox.ChildEnv(environ, sandbox.Inside{})
	for _, k := range sc.PassEnv {
		v, ok := lookupEnv(environ, k)
		if !ok {
			return nil, fmt.Errorf("pass_env names %s, which is not set: export it or remove it from pass_env", k)
		}
		env = append(env, k+"="+v)
	}
	for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
		env = append(env, k+"="+sc.Env[k])
	}
	return env, nil
}

// startProcess starts a stdio server: in opts.Sandbox unless its config
// says unsandboxed or the user chose no sandbox (opts.NoSandbox); with no
// sandbox to hold it otherwise, it does not start.
func startProcess(ctx context.Context, name string, sc config.MCPServer, opts Options) (*process, error) {
	environ := opts.environ()
	env, err := serverEnv(sc, environ)
	if err != nil {
		return nil, err
	}
	max := opts.MaxMessageBytes
	if max <= 0 {
		max = defaultMaxMessage
	}
	p := &process{stderr: &tail{max: 512}}
	if sc.Unsandboxed || opts.NoSandbox {
		return p.startHost(sc, env, max)
	}
	if opts.Sandbox == nil {
		why := "no sandbox was given"
		if opts.WhyNoSandbox != nil {
			why = opts.WhyNoSandbox.Error()
		}
		return nil, fmt.Errorf("it would run in rein's sandbox, and there is none here (%s): see rein sandbox doctor, or set unsandboxed = true in [mcp.servers.%s] of your own config to run it with your rights", why, name)
	}
	path, err := lookPath(sc.Command, env)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "rein-mcp-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("the server's own directory: %w", err)
	}
	sp, err := opts.Sandbox.Start(ctx, sandbox.Program{Path: path, Args: sc.Args, Dir: dir, Env: env, Read: sc.Read, Stderr: p.stderr})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%s in rein's sandbox: %w", sc.Command, err)
	}
	p.sandboxed = true
	p.done, p.exitErr, p.kill = sp.Done(), sp.Err, sp.Kill
	p.cleanup = func() { _ = os.RemoveAll(dir) }
	p.transport = &sdk.IOTransport{Reader: sp.Stdout, Writer: sp.Stdin, MaxLineLength: max}
	return p, nil
}

// startHost starts the server with the user's rights, in its own process
// group.
func (p *process) startHost(sc config.MCPServer, env []string, max int) (*process, error) {
	cmd := exec.Command(sc.Command, sc.Args...)
	cmd.Env = env
	setGroup(cmd)
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", sc.Command, err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(done)
	}()
	p.done = done
	p.exitErr = func() error { <-done; return waitErr }
	p.kill = func() { killGroup(cmd); <-done }
	p.cleanup = func() {}
	p.transport = &sdk.IOTransport{Reader: stdout, Writer: stdin, MaxLineLength: max}
	return p, nil
}

// lookPath finds command as exec would with env's PATH: a name with a
// slash is taken as it is (made absolute), a bare name searched in PATH.
func lookPath(command string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		abs, err := filepath.Abs(command)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("%s: %w", command, err)
		}
		return abs, nil
	}
	path, _ := lookupEnv(env, "PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would resolve against rein's cwd
		}
		p := filepath.Join(dir, command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH (%s)", command, path)
}

// status says how the process ended, or "" while it runs. The
// connection fails a moment before the process is reaped: status waits
// that moment.
func (p *process) status() string {
	select {
	case <-p.done:
	case <-time.After(time.Second):
	}
	select {
	case <-p.done:
		if err := p.exitErr(); err != nil {
			return "ended (" + err.Error() + ")"
		}
		return "exited"
	default:
		return ""
	}
}

// stop lets the server exit on its own for a moment after its stdin
// closed, then kills its process group.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
		}
		p.kill()
		p.cleanup()
	})
}

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(t.b), "?"))
}
