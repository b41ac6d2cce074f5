package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/internal/statedir"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/ledger"
	"github.com/reinhq/rein/serve"
	"github.com/reinhq/rein/telemetry"
	"github.com/reinhq/rein/tool"
)

type serveCmd struct {
	Listen          string        `default:"127.0.0.1:7878" placeholder:"ADDR|unix:PATH" help:"Where to listen: a loopback address (the default), a unix socket (unix:PATH), or any other address only with --tls-cert and --tls-key."`
	TokenFile       string        `name:"token-file" placeholder:"FILE" help:"File whose first line is the bearer token every request must carry (at least 16 characters). Default: a new random token written to STATE/serve/token (mode 0600)."`
	TenantTokens    []string      `name:"tenant-token" placeholder:"NAME=FILE" help:"A token bound to tenant NAME, read from FILE's first line (repeatable): a request that carries it may only create sessions, ask approvals and reserve model calls, all spending NAME's budget ([budget] tenant caps)."`
	TLSCert         string        `name:"tls-cert" placeholder:"FILE" help:"TLS certificate (PEM): serve HTTPS."`
	TLSKey          string        `name:"tls-key" placeholder:"FILE" help:"TLS private key (PEM) for --tls-cert."`
	StateDir        string        `name:"state-dir" placeholder:"DIR" help:"Where the server keeps its index of sessions and its budget ledger, ledger.db (default $XDG_STATE_HOME/rein/serve)."`
	ApprovalTimeout time.Duration `name:"approval-timeout" default:"5m" placeholder:"DURATION" help:"How long a pending approval waits for an answer; then it is No."`
	Webhook         string        `placeholder:"URL" help:"POST a JSON notification (a chat incoming webhook's {\"text\": …} plus fields) for each pending approval and each session's stop. Retried with backoff; never blocks a session."`
	PublicURL       string        `name:"public-url" placeholder:"URL" help:"The page's address as a person reaches it, for the links in notifications (default: the listen address)."`
	Model           string        `placeholder:"PROVIDER:MODEL" help:"The model of a session that names none (default $REIN_MODEL, else model.default from config)."`
	AuditDir        string        `placeholder:"DIR" help:"Directory for the sessions' audit logs (default audit.dir from config, else $XDG_STATE_HOME/rein/audit)."`
	Config          string        `placeholder:"FILE" help:"A config file applied after ~/.config/rein/config.toml and the session's DIR/.rein/config.toml."`
	Sandbox         string        `placeholder:"BACKEND" help:"Where the sessions' commands run (as rein run --sandbox)."`
	OTLPEndpoint    string        `name:"otlp-endpoint" placeholder:"URL" help:"Export every session as OpenTelemetry traces over OTLP/HTTP to URL, like http://localhost:4318/v1/traces. Default: telemetry.otlp_endpoint from your own config, else none."`
	TraceContent    bool          `name:"trace-content" help:"Add the redacted text the audit log holds to the spans (default telemetry.content from your config, else off)."`
}

func (c *serveCmd) Run(ctx context.Context, e env) error {
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	tls := c.TLSCert != ""
	stateDir := c.StateDir
	if stateDir == "" {
		root, err := statedir.Root()
		if err != nil {
			return err
		}
		stateDir = filepath.Join(root, "serve")
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	token, err := c.token(e, stateDir)
	if err != nil {
		return err
	}
	tenants, err := c.tenants()
	if err != nil {
		return err
	}
	ln, addr, err := c.listen(tls)
	if err != nil {
		return err
	}
	defer ln.Close()
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	q := serve.NewQueue(c.ApprovalTimeout)
	var notifier *serve.Notifier
	public := c.PublicURL
	if public == "" {
		public = addr
	}
	if c.Webhook != "" {
		notifier = serve.NewNotifier(serve.NotifierOptions{URL: c.Webhook, PageURL: public, Log: log})
		q.Watch(notifier.Asked, func(serve.Approval, serve.Outcome) {})
	}
	exp, err := c.traces(ctx)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := exp.Shutdown(sctx); err != nil {
			log.Warn("traces", "error", err)
		}
	}()
	lg, err := c.openLedger(stateDir)
	if err != nil {
		return err
	}
	defer lg.Close()
	host, err := serve.NewLocal(serve.LocalOptions{Build: c.builder(exp), Queue: q, StateDir: stateDir, Log: log, Ledger: lg,
		Stopped: func(i serve.Info) {
			if notifier != nil {
				notifier.Stopped(i)
			}
		}})
	if err != nil {
		return err
	}
	srv, err := serve.New(serve.Options{Host: host, Queue: q, Token: token, Secure: tls, Log: log, Ledger: lg, Tenants: tenants})
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, termsafe.Line(addr))
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() {
		if tls {
			errc <- hs.ServeTLS(ln, c.TLSCert, c.TLSKey)
			return
		}
		errc <- hs.Serve(ln)
	}()
	select {
	case err = <-errc:
	case <-ctx.Done():
		fmt.Fprintln(e.stderr, "rein serve: stopping: aborting every session")
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q.Close()
	_ = host.Close(sctx)
	_ = hs.Shutdown(sctx)
	if notifier != nil {
		notifier.Close(sctx)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// tenants reads --tenant-token NAME=FILE: token → tenant.
func (c *serveCmd) tenants() (map[string]string, error) {
	out := map[string]string{}
	for _, v := range c.TenantTokens {
		name, file, ok := strings.Cut(v, "=")
		if !ok || file == "" {
			return nil, usagef("--tenant-token %q: want NAME=FILE", v)
		}
		if err := ledger.CheckTenant(name); err != nil {
			return nil, usagef("--tenant-token: %v", err)
		}
		tok, err := serve.ReadToken(file)
		if err != nil {
			return nil, usagef("--tenant-token %s: %v", name, err)
		}
		if _, dup := out[tok]; dup {
			return nil, usagef("--tenant-token %s: the same token is bound to another tenant", name)
		}
		out[tok] = name
	}
	return out, nil
}

// openLedger opens the server's budget ledger, STATE/ledger.db, with the
// caps of [budget] in the user's config (and --config): a project's config
// can only narrow them, per session.
func (c *serveCmd) openLedger(stateDir string) (*ledger.Ledger, error) {
	sources := []config.Source{{Path: config.UserFile()}}
	if c.Config != "" {
		sources = append(sources, config.Source{Path: c.Config, Required: true})
	}
	cfg, err := config.Load(sources...)
	if err != nil {
		return nil, usageError{err}
	}
	lg, err := ledger.Open(filepath.Join(stateDir, "ledger.db"), ledger.Options{Caps: cfg.Budget.Caps()})
	if err != nil {
		return nil, fmt.Errorf("budget ledger: %w (is another rein serve running on --state-dir %s?)", err, stateDir)
	}
	return lg, nil
}

// token reads --token-file, or makes a token and writes it where only the
// user can read it.
func (c *serveCmd) token(e env, stateDir string) (string, error) {
	if c.TokenFile != "" {
		t, err := serve.ReadToken(c.TokenFile)
		if err != nil {
			return "", usageError{err}
		}
		return t, nil
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	t := hex.EncodeToString(b)
	path := filepath.Join(stateDir, "token")
	if err := os.WriteFile(path, []byte(t+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	fmt.Fprintf(e.stderr, "rein serve: the bearer token is in %s (a new one each start; pass --token-file to choose)\n", termsafe.Line(path))
	return t, nil
}

// listen opens --listen and returns the address to print: a URL, or
// unix:PATH. An address other than loopback needs TLS.
func (c *serveCmd) listen(tls bool) (net.Listener, string, error) {
	if path, ok := strings.CutPrefix(c.Listen, "unix:"); ok {
		if path == "" {
			return nil, "", usagef("--listen unix:PATH: the socket's path is missing")
		}
		_ = os.Remove(path) // a socket left by a killed server
		ln, err := net.Listen("unix", path)
		if err != nil {
			return nil, "", fmt.Errorf("--listen %s: %w", c.Listen, err)
		}
		_ = os.Chmod(path, 0o600)
		return ln, "unix:" + path, nil
	}
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return nil, "", usagef("--listen %q: want HOST:PORT (127.0.0.1:7878) or unix:PATH", c.Listen)
	}
	if !loopback(host) && !tls {
		return nil, "", usagef("--listen %s is not a loopback address: serving beyond this machine needs TLS (--tls-cert, --tls-key) as well as the token", c.Listen)
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return nil, "", fmt.Errorf("--listen %s: %w", c.Listen, err)
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return ln, scheme + "://" + ln.Addr().String(), nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// traces starts the server's trace exporter: --otlp-endpoint, else the
// user's own config's [telemetry]; nil when neither names an endpoint.
func (c *serveCmd) traces(ctx context.Context) (*telemetry.Exporter, error) {
	cfg, err := config.Load(config.Source{Path: config.UserFile()})
	if err != nil {
		return nil, usageError{err}
	}
	tc := telemetry.Config{Endpoint: cfg.Telemetry.OTLPEndpoint, Content: cfg.Telemetry.Content || c.TraceContent, Service: "rein serve"}
	if c.OTLPEndpoint != "" {
		tc.Endpoint = c.OTLPEndpoint
	}
	exp, err := telemetry.Start(ctx, tc)
	if err != nil {
		return nil, usageError{err}
	}
	return exp, nil
}

// builder makes a session's options from an API request the way rein run
// makes them from its flags (agentFlags.prepare): config, model, limits.
// With exp, each session's audit records become its spans.
func (c *serveCmd) builder(exp *telemetry.Exporter) serve.Builder {
	return func(ctx context.Context, req serve.CreateRequest) (guarded.Options, error) {
		if !filepath.IsAbs(req.Workdir) {
			return guarded.Options{}, fmt.Errorf(`field "workdir": %q is not an absolute path`, req.Workdir)
		}
		f := agentFlags{Model: req.Model, Tools: req.Tools, Mode: req.Mode, Workdir: req.Workdir, AuditDir: c.AuditDir,
			Config: c.Config, Sandbox: c.Sandbox, LLMTimeout: 120 * time.Second, MaxContext: 150000}
		if f.Model == "" {
			f.Model = c.Model
		}
		if l := req.Limits; l != nil {
			if err := limitsFlags(l, &f); err != nil {
				return guarded.Options{}, err
			}
		}
		p, err := f.prepare(ctx, env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
		if err != nil {
			return guarded.Options{}, err
		}
		p.lines.Close()
		p.meta.Expect = ""
		p.opts.Meta = p.meta
		if ts := exp.Session(context.WithoutCancel(ctx)); ts != nil {
			p.opts.Observe = chainObserve(ts.Observe, p.opts.Observe)
		}
		// The session's own [budget] (its project's may lower it) narrows
		// the server's caps; the host binds it to the ledger and tenant.
		p.opts.Ledger = &ledger.Account{Caps: p.meta.Config.Budget.Caps()}
		return p.opts, nil
	}
}

// limitsFlags sets the caps of a request as rein run's flags would be.
func limitsFlags(l *serve.Limits, f *agentFlags) error {
	if v := l.MaxSteps; v != nil {
		if *v <= 0 {
			return errors.New(`field "limits.max_steps": must be a positive number`)
		}
		f.MaxSteps = capFlag[int]{set: true, v: *v}
	}
	if v := l.MaxToolCalls; v != nil {
		if *v <= 0 {
			return errors.New(`field "limits.max_tool_calls": must be a positive number`)
		}
		f.MaxToolCalls = capFlag[int]{set: true, v: *v}
	}
	if v := l.MaxTokens; v != nil {
		if *v <= 0 {
			return errors.New(`field "limits.max_tokens": must be a positive number`)
		}
		f.MaxTokens = capFlag[int64]{set: true, v: *v}
	}
	if v := l.MaxCostUSD; v != nil {
		if !(*v > 0) {
			return errors.New(`field "limits.max_cost_usd": must be a positive amount`)
		}
		f.MaxCostUSD = capFlag[float64]{set: true, v: *v}
	}
	if l.Timeout != "" {
		d, err := time.ParseDuration(l.Timeout)
		if err != nil || d <= 0 {
			return fmt.Errorf(`field "limits.timeout": %q is not a positive duration like "90s"`, l.Timeout)
		}
		f.Timeout = capFlag[time.Duration]{set: true, v: d}
	}
	return nil
}

// remoteApprover is the approver of rein run --approvals URL (or the
// user's approvals.url): the session's questions wait in that server's
// queue. Nil when neither is set.
func (c *agentFlags) remoteApprover(cfg config.Config) (*serve.Remote, error) {
	raw := c.Approvals
	if raw == "" {
		raw = cfg.Approvals.URL
	}
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("--approvals %q: want the URL rein serve printed, like http://127.0.0.1:7878", raw)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return nil, usagef("--approvals %s: the token would cross the network in clear text; use https (rein serve --tls-cert) or a loopback address", raw)
	}
	file := c.ApprovalsToken
	if file == "" {
		file = cfg.Approvals.TokenFile
	}
	var token string
	switch {
	case file != "":
		if token, err = serve.ReadToken(file); err != nil {
			return nil, usageError{err}
		}
	case os.Getenv("REIN_APPROVALS_TOKEN") != "":
		token = strings.TrimSpace(os.Getenv("REIN_APPROVALS_TOKEN"))
	default:
		return nil, usagef("--approvals %s needs rein serve's token: pass --approvals-token-file FILE or set REIN_APPROVALS_TOKEN", raw)
	}
	reg := knownTools()
	return &serve.Remote{URL: strings.TrimRight(raw, "/"), Token: token, Timeout: c.ApprovalTimeout,
		Effect: func(name string) (string, bool) {
			t, ok := reg.Lookup(name)
			if !ok {
				return "unknown", false
			}
			e := t.Spec().Effect
			return e.String(), e == tool.Reversible
		}}, nil
}
