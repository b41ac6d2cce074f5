package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reinhq/rein/internal/statedir"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/ledger"
	"github.com/reinhq/rein/serve"
)

// costCmd is `rein cost`: the budget ledger of rein serve, per UTC day,
// per tenant and per session.
type costCmd struct {
	Server    string `placeholder:"URL" help:"Ask a running rein serve at URL for its ledger (token from --token-file, else $REIN_APPROVALS_TOKEN). Default: read the ledger file."`
	TokenFile string `name:"token-file" placeholder:"FILE" help:"File holding rein serve's bearer token, for --server."`
	Ledger    string `placeholder:"FILE" help:"The ledger file to read (default STATE/serve/ledger.db, rein serve's own). A running server holds it: then use --server."`
	JSON      bool   `name:"json" help:"Print the ledger as one JSON object."`
}

func (c *costCmd) Run(ctx context.Context, e env) error {
	var rep ledger.Report
	var from string
	var err error
	if c.Server != "" {
		rep, err = c.ask(ctx)
		from = c.Server
	} else {
		rep, from, err = c.read()
	}
	if err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printLedger(e.stdout, rep, from)
	return nil
}

// read opens the ledger file read-only.
func (c *costCmd) read() (ledger.Report, string, error) {
	path := c.Ledger
	if path == "" {
		root, err := statedir.Root()
		if err != nil {
			return ledger.Report{}, "", err
		}
		path = filepath.Join(root, "serve", "ledger.db")
	}
	l, err := ledger.Open(path, ledger.Options{ReadOnly: true, Timeout: 200 * time.Millisecond})
	switch {
	case errors.Is(err, os.ErrNotExist):
		return ledger.Report{}, "", usagef("no ledger at %s: rein serve keeps one in its state dir (pass --ledger FILE or --server URL)", path)
	case errors.Is(err, ledger.ErrLocked):
		return ledger.Report{}, "", usagef("%v: ask the running server with --server URL", err)
	case err != nil:
		return ledger.Report{}, "", err
	}
	defer l.Close()
	rep, err := l.Report()
	return rep, path, err
}

// ask gets the ledger from a running server.
func (c *costCmd) ask(ctx context.Context) (ledger.Report, error) {
	u, err := url.Parse(c.Server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ledger.Report{}, usagef("--server %q: want the URL rein serve printed, like http://127.0.0.1:7878", c.Server)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return ledger.Report{}, usagef("--server %s: the token would cross the network in clear text; use https or a loopback address", c.Server)
	}
	token := strings.TrimSpace(os.Getenv("REIN_APPROVALS_TOKEN"))
	if c.TokenFile != "" {
		if token, err = serve.ReadToken(c.TokenFile); err != nil {
			return ledger.Report{}, usageError{err}
		}
	}
	if token == "" {
		return ledger.Report{}, usagef("--server needs rein serve's token: pass --token-file FILE or set REIN_APPROVALS_TOKEN")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.Server, "/")+"/v1/ledger", nil)
	if err != nil {
		return ledger.Report{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ledger.Report{}, fmt.Errorf("rein serve at %s cannot be reached: %w", c.Server, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return ledger.Report{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return ledger.Report{}, fmt.Errorf("rein serve at %s: %s: %s", c.Server, resp.Status, strings.TrimSpace(string(body)))
	}
	var rep ledger.Report
	if err := json.Unmarshal(body, &rep); err != nil {
		return ledger.Report{}, fmt.Errorf("rein serve at %s: its ledger: %w", c.Server, err)
	}
	return rep, nil
}

// printLedger writes the ledger as tables: days, tenants' days, sessions,
// calls in flight. Tenants and session ids came from API clients.
func printLedger(w io.Writer, rep ledger.Report, from string) {
	fmt.Fprintf(w, "Ledger: %s\n", termsafe.Line(from))
	if rep.Caps != (ledger.Caps{}) {
		fmt.Fprintf(w, "Caps per UTC day: %s\n", termsafe.Line(capsText(rep.Caps)))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nDAY (UTC)\tCALLS\tTOKENS\tCOST")
	for _, d := range rep.Days {
		fmt.Fprintf(tw, "%s\t%d\t%d\t$%.4f\n", termsafe.Line(d.Day), d.Calls, d.Tokens, d.CostUSD)
	}
	fmt.Fprintln(tw, "\nTENANT\tDAY (UTC)\tCALLS\tTOKENS\tCOST")
	for _, t := range rep.Tenants {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t$%.4f\n", termsafe.Line(t.Tenant), termsafe.Line(t.Day), t.Calls, t.Tokens, t.CostUSD)
	}
	fmt.Fprintln(tw, "\nSESSION\tTENANT\tDAYS (UTC)\tCALLS\tTOKENS\tCOST")
	for _, s := range rep.Sessions {
		days := s.First
		if s.Last != s.First {
			days += ".." + s.Last
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t$%.4f\n", termsafe.Line(s.Session), termsafe.Line(s.Tenant), termsafe.Line(days), s.Calls, s.Tokens, s.CostUSD)
	}
	if len(rep.InFlight) > 0 {
		fmt.Fprintln(tw, "\nIN FLIGHT\tTENANT\tDAY (UTC)\tTOKENS HELD\tCOST HELD")
		for _, r := range rep.InFlight {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t$%.4f\n", termsafe.Line(r.Session), termsafe.Line(r.Tenant), termsafe.Line(r.Day), r.Tokens, r.CostUSD)
		}
	}
	_ = tw.Flush()
}

// capsText says the caps in words: "all sessions $20.00, 2000000 tokens;
// each tenant $5.00".
func capsText(c ledger.Caps) string {
	part := func(usd float64, tokens int64) string {
		var p []string
		if usd > 0 {
			p = append(p, fmt.Sprintf("$%.2f", usd))
		}
		if tokens > 0 {
			p = append(p, fmt.Sprintf("%d tokens", tokens))
		}
		return strings.Join(p, ", ")
	}
	var out []string
	if s := part(c.DayCostUSD, c.DayTokens); s != "" {
		out = append(out, "all sessions "+s)
	}
	if s := part(c.TenantCostUSD, c.TenantTokens); s != "" {
		out = append(out, "each tenant "+s)
	}
	return strings.Join(out, "; ")
}
