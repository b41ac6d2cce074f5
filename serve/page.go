package serve

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/internal/termsafe"
)

//go:embed web
var webFS embed.FS

// cookieName holds the token for the page (HttpOnly, SameSite=Strict).
const cookieName = "rein_token"

// csp is the page's Content-Security-Policy: nothing runs (no script at
// all), styles only from this server, forms post only here, no framing.
const csp = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

var pageRoutes = []route{
	{"GET", "/{$}", true, (*Server).indexPage},
	{"GET", "/sessions/{id}", true, (*Server).sessionPage},
	{"POST", "/ui/approvals/{id}", true, (*Server).answerForm},
	{"POST", "/ui/abort", true, (*Server).abortAllForm},
	{"POST", "/ui/sessions/{id}/abort", true, (*Server).abortForm},
}

var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"safe":  termsafe.Visible,
		"args":  prettyArgs,
		"when":  func(t time.Time) string { return t.UTC().Format("15:04:05") },
		"left":  func(t time.Time) string { return time.Until(t).Round(time.Second).String() },
		"money": func(f float64) string { return fmt.Sprintf("$%.4f", f) },
		"head": func(title string, refresh bool) map[string]any {
			return map[string]any{"Title": title, "Refresh": refresh}
		},
		"item": func(a Approval, first bool, back string) approvalItem {
			return approvalItem{A: a, First: first, Back: back}
		},
	}).ParseFS(webFS, "web/*.html"))
})

// public registers what the page needs before anyone has signed in: the
// sign-in form's post, the stylesheet and the icon (without them the
// sign-in page would be unstyled and the browser would log a 401 and a 404
// on every page).
func (s *Server) public() {
	s.mux.HandleFunc("POST /login", s.login)
	s.mux.HandleFunc("GET /static/style.css", s.static("web/style.css", "text/css; charset=utf-8"))
	s.mux.HandleFunc("GET /favicon.ico", s.static("web/icon.svg", "image/svg+xml"))
	s.mux.HandleFunc("GET /static/icon.svg", s.static("web/icon.svg", "image/svg+xml"))
}

// prettyArgs is a call's arguments, indented, one field a line, every
// argument in full, with characters a terminal or a reader would be fooled
// by made visible.
// The HTML escapes JSON encoders write (\u003c for <) are shown as the
// characters they stand for, so a person reads <script> where the
// arguments hold it; html/template escapes them for the page.
func prettyArgs(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return termsafe.Visible(string(raw))
	}
	// json.Indent's newlines and indentation are the only raw ones (a
	// JSON string holds none): they stay; each line's text is made visible.
	lines := strings.Split(unescapeHTML(b.String()), "\n")
	for i, l := range lines {
		text := strings.TrimLeft(l, " ")
		lines[i] = l[:len(l)-len(text)] + termsafe.Visible(text)
	}
	return strings.Join(lines, "\n")
}

// unescapeHTML turns JSON's \u003c, \u003e and \u0026 escapes back into <,
// > and &, leaving every other escape (an escaped backslash before "u003c"
// included) as it is.
func unescapeHTML(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch strings.ToLower(s[i+2 : i+6]) {
			case "003c":
				b.WriteByte('<')
				i += 5
				continue
			case "003e":
				b.WriteByte('>')
				i += 5
				continue
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			}
		}
		b.WriteString(s[i : i+2]) // an escape: both its bytes, so its second is never read as the start of another
		i++
	}
	return b.String()
}

func (s *Server) render(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := pages().ExecuteTemplate(&b, name, data); err != nil {
		writeError(w, http.StatusInternalServerError, "page: "+err.Error())
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	_, _ = w.Write(b.Bytes())
}

// approvalItem is one approval as the page shows it: First gets the focus
// on Deny.
type approvalItem struct {
	A     Approval
	First bool
	Back  string
}

// indexData is the main page: the queue and the sessions.
type indexData struct {
	Approvals []Approval
	Sessions  []Info
	Refusals  []gateCount
	Now       time.Time
}

type gateCount struct {
	Gate  string
	Count int
}

func (s *Server) indexPage(w http.ResponseWriter, _ *http.Request) {
	d := indexData{Approvals: s.o.Queue.Pending(""), Sessions: s.o.Host.Sessions(), Now: time.Now()}
	all := map[string]int{}
	for _, i := range d.Sessions {
		for g, n := range i.Refusals {
			all[g] += n
		}
	}
	d.Refusals = refusalsByGate(all)
	s.render(w, "index.html", d)
}

// sessionData is one session's page.
type sessionData struct {
	Info      Info
	Approvals []Approval
	Verify    audit.Report
	VerifyErr string
	Timeline  string
	Refusals  string
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	info, err := s.o.Host.Session(id)
	if err != nil {
		fail(w, err)
		return
	}
	d := sessionData{Info: info, Approvals: s.o.Queue.Pending(id)}
	if d.Verify, err = verifyFile(info.Audit); err != nil {
		d.VerifyErr = err.Error()
	}
	d.Timeline, d.Refusals = showLog(info.Audit)
	s.render(w, "session.html", d)
}

// showLog is what `rein audit show` prints of the log, and its refusals
// by gate.
func showLog(path string) (timeline, refusals string) {
	var t, rf bytes.Buffer
	for _, o := range []struct {
		b *bytes.Buffer
		o audit.ShowOptions
	}{{&t, audit.ShowOptions{}}, {&rf, audit.ShowOptions{Refusals: true}}} {
		b, err := os.ReadFile(path)
		if err != nil {
			return "cannot read the audit log: " + err.Error(), ""
		}
		_ = audit.Show(o.b, bytes.NewReader(b), o.o)
	}
	return t.String(), rf.String()
}

// static serves one embedded file.
func (s *Server) static(name, contentType string) http.HandlerFunc {
	b, err := webFS.ReadFile(name)
	if err != nil {
		panic("serve: embedded " + name + " is missing: " + err.Error()) // a build without web/: a programming error
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "max-age=300")
		_, _ = w.Write(b)
	}
}

func (s *Server) answerForm(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, "form: "+err.Error())
		return
	}
	rep := Reply{Token: r.PostForm.Get("token"), Decision: r.PostForm.Get("decision"), Scope: r.URL.Query().Get("scope"), Text: r.PostForm.Get("text")}
	if _, ok := s.answer(w, r, rep, "serve:web "+client(r)); ok {
		http.Redirect(w, r, back(r), http.StatusSeeOther)
	}
}

func (s *Server) abortAllForm(w http.ResponseWriter, r *http.Request) {
	s.o.Host.AbortAll("kill switch on the web page")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) abortForm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.o.Host.Abort(id, "aborted on the web page"); err != nil {
		fail(w, err)
		return
	}
	http.Redirect(w, r, "/sessions/"+id, http.StatusSeeOther)
}

// back is where a form returns: the page it came from when that is ours.
func back(r *http.Request) string {
	if p := r.PostForm.Get("back"); len(p) > 1 && p[0] == '/' && p[1] != '/' && p[1] != '\\' {
		return p
	}
	return "/"
}

// loginPage asks for the token; POST /login sets the cookie.
func (s *Server) loginPage(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusUnauthorized)
	s.render(w, "login.html", nil)
}

// login checks the posted token and sets the page's cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || !s.tokenOK(r.PostForm.Get("token")) {
		w.Header().Set("Content-Security-Policy", csp)
		s.loginPage(w, r)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.o.Token, Path: "/", HttpOnly: true, Secure: s.o.Secure, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func refusalsByGate(m map[string]int) []gateCount {
	out := make([]gateCount, 0, len(m))
	for g, n := range m {
		out = append(out, gateCount{g, n})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Count > out[j].Count || out[i].Count == out[j].Count && out[i].Gate < out[j].Gate
	})
	return out
}
