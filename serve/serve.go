// Package serve is rein's session host: a long-lived HTTP server that
// starts, runs and keeps guarded sessions (the same sessions `rein run`
// makes, through guarded.New), streams their events, holds the approval
// queue where every question a session asks waits for a person, and shows
// it all on a server-rendered web page with a kill switch.
//
// Every request carries the server's bearer token (the page: a cookie set
// from it). The API is under /v1/ and described by /v1/openapi.json; a
// test holds the description and the handlers to each other.
//
// It keeps the budget across sessions in a ledger (package ledger): every
// model call of a hosted session, and of a run that points at the server
// (RemoteLedger), is reserved there first, against caps per UTC day and
// per tenant. Traces are package telemetry's, which the builder cmd/rein
// supplies chains into each session.
//
// It does not decide anything about calls: the gates do.
package serve

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/ledger"
	"github.com/reinhq/rein/model/jsonx"
)

//go:embed openapi.json
var openapiJSON []byte

// Options configure a Server.
type Options struct {
	// Host runs the sessions. Required.
	Host Host
	// Queue is the approval queue the host's sessions ask. Required.
	Queue *Queue
	// Token is the bearer token every request must carry. Required.
	Token string
	// Tenants are more tokens, each bound to a tenant (token → tenant): a
	// request that carries one may only create sessions, ask approvals
	// and reserve and settle model calls, all as that tenant, whose
	// budget it spends whatever the request names.
	Tenants map[string]string
	// Ledger, when set, is the budget ledger the API serves to runs that
	// point at this server (/v1/ledger); the host's sessions use it too.
	Ledger *ledger.Ledger
	// Secure marks the page's cookie Secure (the server speaks TLS).
	Secure bool
	// Log receives operational messages; nil discards them.
	Log *slog.Logger
}

// Server is the HTTP face of a Host and a Queue.
type Server struct {
	o   Options
	mux *http.ServeMux
}

// route is one endpoint: the mux registers exactly these, and the OpenAPI
// test checks the description against exactly these.
type route struct {
	method, path string
	page         bool // the web page's (cookie or bearer), not the API's
	h            func(*Server, http.ResponseWriter, *http.Request)
}

// routes are the server's endpoints.
var routes = []route{
	{"GET", "/v1/openapi.json", false, (*Server).openapi},
	{"GET", "/v1/sessions", false, (*Server).listSessions},
	{"POST", "/v1/sessions", false, (*Server).createSession},
	{"GET", "/v1/sessions/{id}", false, (*Server).getSession},
	{"GET", "/v1/sessions/{id}/events", false, (*Server).events},
	{"POST", "/v1/sessions/{id}/abort", false, (*Server).abortSession},
	{"POST", "/v1/sessions/{id}/rollback", false, (*Server).rollbackSession},
	{"GET", "/v1/sessions/{id}/audit", false, (*Server).auditLog},
	{"GET", "/v1/sessions/{id}/audit/verify", false, (*Server).auditVerify},
	{"POST", "/v1/abort", false, (*Server).abortAll},
	{"GET", "/v1/approvals", false, (*Server).listApprovals},
	{"POST", "/v1/approvals", false, (*Server).askApproval},
	{"GET", "/v1/approvals/{id}", false, (*Server).getApproval},
	{"POST", "/v1/approvals/{id}", false, (*Server).answerApproval},
	{"GET", "/v1/ledger", false, (*Server).ledgerReport},
	{"POST", "/v1/ledger/reserve", false, (*Server).ledgerReserve},
	{"POST", "/v1/ledger/settle", false, (*Server).ledgerSettle},
}

// New returns a server for o.
func New(o Options) (*Server, error) {
	if o.Host == nil || o.Queue == nil {
		return nil, errors.New("serve: Options.Host and Queue are required")
	}
	if len(o.Token) < 16 {
		return nil, errors.New("serve: the token must be at least 16 characters")
	}
	for tok, tenant := range o.Tenants {
		if len(tok) < 16 || tok == o.Token {
			return nil, fmt.Errorf("serve: tenant %q's token must be at least 16 characters and not the server's own", tenant)
		}
		if err := ledger.CheckTenant(tenant); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, mux: http.NewServeMux()}
	for _, r := range append(routes, pageRoutes...) {
		s.mux.HandleFunc(r.method+" "+r.path, s.guard(r))
	}
	s.public()
	return s, nil
}

// ServeHTTP serves the API and the page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

// guard checks the token, then calls the route's handler.
func (s *Server) guard(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if tenant, ok := s.tenantToken(r); ok && !rt.page {
			if !tenantRoutes[rt.method+" "+rt.path] {
				writeError(w, http.StatusForbidden, fmt.Sprintf("this token is tenant %s's: it may only create sessions, ask approvals and reserve and settle model calls", tenant))
				return
			}
			rt.h(s, w, r.WithContext(context.WithValue(r.Context(), tenantKey{}, tenant)))
			return
		}
		if !s.authorized(r, rt.page) {
			if rt.page && r.Method == http.MethodGet {
				s.loginPage(w, r)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="rein"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token: send Authorization: Bearer TOKEN (the token rein serve was given or wrote)")
			return
		}
		if rt.page && r.Method == http.MethodPost && !sameOrigin(r) {
			writeError(w, http.StatusForbidden, "cross-site form post refused")
			return
		}
		rt.h(s, w, r)
	}
}

// authorized checks the bearer token, or for the page the cookie.
func (s *Server) authorized(r *http.Request, page bool) bool {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.tokenOK(tok) {
		return true
	}
	if page {
		if c, err := r.Cookie(cookieName); err == nil && s.tokenOK(c.Value) {
			return true
		}
	}
	return false
}

// tenantRoutes are what a tenant's token may do.
var tenantRoutes = map[string]bool{
	"POST /v1/sessions": true, "POST /v1/approvals": true, "POST /v1/ledger/reserve": true, "POST /v1/ledger/settle": true,
}

// tenantKey is the context key of the tenant a request's token is bound to.
type tenantKey struct{}

// boundTenant is the tenant r's token is bound to, if it is a tenant's.
func boundTenant(r *http.Request) (string, bool) {
	t, ok := r.Context().Value(tenantKey{}).(string)
	return t, ok
}

// tenantToken reports the tenant whose token r carries, if any. Every
// tenant token is compared, in constant time each.
func (s *Server) tenantToken(r *http.Request) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || len(s.o.Tenants) == 0 {
		return "", false
	}
	var found string
	for t, tenant := range s.o.Tenants {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(t)) == 1 {
			found = tenant
		}
	}
	return found, found != ""
}

// bindTenant sets *named to the tenant r's token is bound to; a request
// that names another is refused (403) and false returned.
func bindTenant(w http.ResponseWriter, r *http.Request, named *string) bool {
	t, ok := boundTenant(r)
	if !ok {
		return true
	}
	if *named != "" && *named != t {
		writeError(w, http.StatusForbidden, fmt.Sprintf(`field "tenant": this token spends tenant %s's budget, not %q's`, t, *named))
		return false
	}
	*named = t
	return true
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.o.Token)) == 1
}

// sameOrigin refuses a form posted from another site: browsers send
// Sec-Fetch-Site, or at least Origin, on a POST.
func sameOrigin(r *http.Request) bool {
	if sfs := r.Header.Get("Sec-Fetch-Site"); sfs != "" {
		return sfs == "same-origin"
	}
	if o := r.Header.Get("Origin"); o != "" {
		return o == "http://"+r.Host || o == "https://"+r.Host
	}
	return true // not a browser: it carried the token itself
}

// maxBody is the most a request body may hold.
const maxBody = 1 << 20

// decode reads a JSON body strictly into v: an unknown field, a wrong type
// or trailing data is a 400 naming the field.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body: %v (at most %d bytes)", err, maxBody))
		return false
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		writeError(w, http.StatusBadRequest, "request body: empty; send a JSON object")
		return false
	}
	if err := jsonx.DecodeStrict(body, v); err != nil {
		writeError(w, http.StatusBadRequest, "request body: "+err.Error())
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// apiError is the body of every error.
type apiError struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, apiError{Error: msg})
}

// fail writes err with the status its kind calls for.
func fail(w http.ResponseWriter, err error) {
	var bad *BadRequestError
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrStale), errors.Is(err, ErrRunning):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, ErrBadReply), errors.As(err, &bad):
		writeError(w, http.StatusBadRequest, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openapiJSON)
}

func (s *Server) listSessions(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"sessions": s.o.Host.Sessions()})
}

// created is the answer to POST /v1/sessions.
type created struct {
	ID string `json:"id"`
	Info
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var req CreateRequest
	if !decode(w, r, &req) || !bindTenant(w, r, &req.Tenant) {
		return
	}
	if strings.TrimSpace(req.Task) == "" {
		writeError(w, http.StatusBadRequest, `field "task" is required: say what the agent should do`)
		return
	}
	if req.Workdir == "" {
		writeError(w, http.StatusBadRequest, `field "workdir" is required: the directory the session works in`)
		return
	}
	if req.Limits != nil && req.Limits.Timeout != "" {
		if _, err := time.ParseDuration(req.Limits.Timeout); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf(`field "limits.timeout": %q is not a duration like "90s" or "30m"`, req.Limits.Timeout))
			return
		}
	}
	// The session outlives the request: its context is the host's.
	info, err := s.o.Host.Create(context.WithoutCancel(r.Context()), req)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, created{ID: info.ID, Info: info})
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	info, err := s.o.Host.Session(r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// events streams a session's events as Server-Sent Events, one JSON
// object per event, from the first (or after Last-Event-ID) to the stop.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	from := 0
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "Last-Event-ID: want the number of an event")
			return
		}
		from = n + 1
	}
	evs, more, ended, err := s.o.Host.Events(id, from)
	if err != nil {
		fail(w, err)
		return
	}
	fl, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		for _, e := range evs {
			if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", from, e); err != nil {
				return
			}
			from++
		}
		if fl != nil {
			fl.Flush()
		}
		if ended {
			return
		}
		select {
		case <-more:
		case <-keep.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			continue
		case <-r.Context().Done():
			return
		}
		if evs, more, ended, err = s.o.Host.Events(id, from); err != nil {
			return
		}
	}
}

// abortBody is the optional body of an abort.
type abortBody struct {
	Reason string `json:"reason,omitempty"`
}

func (s *Server) abortReason(w http.ResponseWriter, r *http.Request) (string, bool) {
	var b abortBody
	if r.ContentLength != 0 {
		if !decode(w, r, &b) {
			return "", false
		}
	}
	if b.Reason == "" {
		b.Reason = "aborted through rein serve"
	}
	return b.Reason, true
}

func (s *Server) abortSession(w http.ResponseWriter, r *http.Request) {
	reason, ok := s.abortReason(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if err := s.o.Host.Abort(id, reason); err != nil {
		fail(w, err)
		return
	}
	s.o.Log.Info("abort", "session", id, "reason", reason)
	info, _ := s.o.Host.Session(id)
	writeJSON(w, http.StatusAccepted, info)
}

func (s *Server) abortAll(w http.ResponseWriter, r *http.Request) {
	reason, ok := s.abortReason(w, r)
	if !ok {
		return
	}
	n := s.o.Host.AbortAll(reason)
	s.o.Log.Info("abort all", "sessions", n, "reason", reason)
	writeJSON(w, http.StatusAccepted, map[string]int{"aborted": n})
}

func (s *Server) rollbackSession(w http.ResponseWriter, r *http.Request) {
	reports, err := s.o.Host.Rollback(r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": reports})
}

func (s *Server) auditLog(w http.ResponseWriter, r *http.Request) {
	path, err := s.o.Host.AuditPath(r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	http.ServeFile(w, r, path)
}

func (s *Server) auditVerify(w http.ResponseWriter, r *http.Request) {
	rep, err := s.verify(r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func (s *Server) verify(id string) (audit.Report, error) {
	path, err := s.o.Host.AuditPath(id)
	if err != nil {
		return audit.Report{}, err
	}
	return verifyFile(path)
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"approvals": s.o.Queue.Pending(r.URL.Query().Get("session"))})
}

func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) {
	a, ok := s.o.Queue.Get(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("approval %q is not pending (answered, expired, or never asked)", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	var rep Reply
	if !decode(w, r, &rep) {
		return
	}
	s.answer(w, r, rep, "serve:api "+client(r))
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, rep Reply, by string) (Outcome, bool) {
	out, err := s.o.Queue.Answer(r.PathValue("id"), rep, by)
	if err != nil {
		fail(w, err)
		return out, false
	}
	s.o.Log.Info("approval answered", "approval", out.ID, "session", out.Session, "decision", out.Decision, "by", by)
	if !strings.HasPrefix(by, "serve:web") {
		writeJSON(w, http.StatusOK, out)
	}
	return out, true
}

// client names who answered, for the log: the remote address (the token
// is shared, so it is the channel and the place, not a person).
func client(r *http.Request) string { return r.RemoteAddr }
