package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/ledger"
)

// ReserveRequest is the body of POST /v1/ledger/reserve: a model call a
// session is about to make, from a run that points at this server.
type ReserveRequest struct {
	Session string  `json:"session"`
	Tenant  string  `json:"tenant,omitempty"`
	Step    int     `json:"step,omitempty"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	// Caps are the run's own caps of the shared budget; they only narrow
	// the server's.
	Caps *ledger.Caps `json:"caps,omitempty"`
}

// Reserved is the answer to a reservation admitted.
type Reserved struct {
	Ticket string `json:"ticket"`
}

// SettleRequest is the body of POST /v1/ledger/settle: what the call of a
// reservation used.
type SettleRequest struct {
	Ticket  string  `json:"ticket"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// Exceeded is the answer (429) to a reservation a cap refused: the
// error's text, and the cap in parts.
type Exceeded struct {
	Error  string       `json:"error"`
	Limit  budget.Limit `json:"limit"`
	Scope  string       `json:"scope"`
	Used   string       `json:"used"`
	Max    string       `json:"max"`
	Resets time.Time    `json:"resets"`
}

func (s *Server) ledgerOr503(w http.ResponseWriter) *ledger.Ledger {
	if s.o.Ledger == nil {
		writeError(w, http.StatusServiceUnavailable, "this server keeps no budget ledger")
	}
	return s.o.Ledger
}

func (s *Server) ledgerReport(w http.ResponseWriter, _ *http.Request) {
	l := s.ledgerOr503(w)
	if l == nil {
		return
	}
	rep, err := l.Report()
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func (s *Server) ledgerReserve(w http.ResponseWriter, r *http.Request) {
	l := s.ledgerOr503(w)
	if l == nil {
		return
	}
	var q ReserveRequest
	if !decode(w, r, &q) || !bindTenant(w, r, &q.Tenant) {
		return
	}
	if q.Tenant == "" {
		q.Tenant = ledger.DefaultTenant
	}
	var caps ledger.Caps
	if q.Caps != nil {
		caps = *q.Caps
	}
	switch {
	case q.Session == "":
		writeError(w, http.StatusBadRequest, `field "session" is required: the id of the session that makes the call`)
		return
	case ledger.CheckTenant(q.Tenant) != nil:
		writeError(w, http.StatusBadRequest, `field "tenant": `+ledger.CheckTenant(q.Tenant).Error())
		return
	case q.Tokens < 0:
		writeError(w, http.StatusBadRequest, `field "tokens" must not be negative`)
		return
	case !(q.CostUSD >= 0):
		writeError(w, http.StatusBadRequest, `field "cost_usd" must not be negative`)
		return
	case caps.Validate() != nil:
		writeError(w, http.StatusBadRequest, `field "caps": `+caps.Validate().Error())
		return
	}
	ticket, err := l.Reserve(r.Context(), ledger.Request{Charge: budget.Charge{Session: q.Session, Step: q.Step, Tokens: q.Tokens, CostUSD: q.CostUSD},
		Tenant: q.Tenant, Caps: caps})
	var ex *budget.ExceededError
	if errors.As(err, &ex) {
		s.o.Log.Info("budget cap reached", "session", q.Session, "tenant", q.Tenant, "cap", ex.Scope, "limit", ex.Limit)
		writeJSON(w, http.StatusTooManyRequests, Exceeded{Error: ex.Error(), Limit: ex.Limit, Scope: ex.Scope, Used: ex.Used, Max: ex.Max, Resets: ex.Resets})
		return
	}
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, Reserved{Ticket: ticket})
}

func (s *Server) ledgerSettle(w http.ResponseWriter, r *http.Request) {
	l := s.ledgerOr503(w)
	if l == nil {
		return
	}
	var q SettleRequest
	if !decode(w, r, &q) {
		return
	}
	switch {
	case q.Ticket == "":
		writeError(w, http.StatusBadRequest, `field "ticket" is required: the ticket the reservation returned`)
		return
	case q.Tokens < 0:
		writeError(w, http.StatusBadRequest, `field "tokens" must not be negative`)
		return
	case !(q.CostUSD >= 0):
		writeError(w, http.StatusBadRequest, `field "cost_usd" must not be negative`)
		return
	}
	err := l.Settle(r.Context(), q.Ticket, q.Tokens, q.CostUSD)
	if errors.Is(err, ledger.ErrUnknownTicket) {
		writeError(w, http.StatusNotFound, `field "ticket": `+err.Error())
		return
	}
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}

// RemoteLedger is the ledger of a running `rein serve`, asked over its
// authenticated API before and after each model call of a run that points
// at it (rein run --approvals URL). A server that cannot be reached, or
// that answers anything but yes, stops the run: fail closed.
type RemoteLedger struct {
	// URL is the server's base URL; Token its bearer token.
	URL, Token string
	// Tenant is whose budget the run spends ("" is "default").
	Tenant string
	// Caps are the run's own caps of the shared budget (its config's
	// [budget]); they only narrow the server's.
	Caps ledger.Caps
	// Client is the HTTP client; nil is one with a 30-second timeout.
	Client *http.Client
}

var _ agent.Ledger = (*RemoteLedger)(nil)

// Reserve asks the server to admit a call.
func (c *RemoteLedger) Reserve(ctx context.Context, ch budget.Charge) (string, error) {
	q := ReserveRequest{Session: ch.Session, Tenant: c.Tenant, Step: ch.Step, Tokens: ch.Tokens, CostUSD: ch.CostUSD}
	if c.Caps != (ledger.Caps{}) {
		caps := c.Caps
		q.Caps = &caps
	}
	var out Reserved
	if err := c.post(ctx, "/v1/ledger/reserve", q, &out); err != nil {
		return "", err
	}
	return out.Ticket, nil
}

// Settle tells the server what the call used.
func (c *RemoteLedger) Settle(ctx context.Context, ticket string, ch budget.Charge) error {
	return c.post(ctx, "/v1/ledger/settle", SettleRequest{Ticket: ticket, Tokens: ch.Tokens, CostUSD: ch.CostUSD}, &struct{}{})
}

func (c *RemoteLedger) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+path, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("budget ledger at %s: %w", c.URL, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Content-Type", "application/json")
	hc := c.Client
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("budget ledger at %s cannot be reached (is rein serve running?): %w", c.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("budget ledger at %s: %w", c.URL, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("budget ledger at %s: its answer: %w", c.URL, err)
		}
		return nil
	case http.StatusTooManyRequests:
		var ex Exceeded
		if err := json.Unmarshal(data, &ex); err != nil || ex.Limit == "" {
			return fmt.Errorf("budget ledger at %s: a refusal that cannot be read: %s", c.URL, bytes.TrimSpace(data))
		}
		return &budget.ExceededError{Limit: ex.Limit, Used: ex.Used, Max: ex.Max, Scope: ex.Scope, Resets: ex.Resets}
	}
	var e apiError
	_ = json.Unmarshal(data, &e)
	return fmt.Errorf("budget ledger at %s: %s: %s", c.URL, resp.Status, e.Error)
}
