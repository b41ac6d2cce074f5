package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/ledger"
	"github.com/reinhq/rein/model/scripted"
	"github.com/reinhq/rein/tool"
)

func TestMain(m *testing.M) { os.Exit(testenv.IsolateState(m)) }

const testToken = "test-token-0123456789abcdef"

// fixture is a server over a Local host whose sessions play a script
// (the request's model is the script itself, as JSON) with two tools of
// their own: deploy (irreversible: every call asks) and wait (blocks until
// the session is aborted, or its args' ms pass).
type fixture struct {
	t       *testing.T
	srv     *httptest.Server
	host    *Local
	queue   *Queue
	state   string
	deploys atomic.Int32
	// caps, when set, gives the server a ledger with these caps, in the
	// state dir (ledger.db), and every session the tenant of its request.
	caps   *ledger.Caps
	ledger *ledger.Ledger
	// sessionCaps are what the builder says of every session's own caps
	// (a project's [budget], which may only narrow).
	sessionCaps *ledger.Caps
	// tenants are tokens bound to tenants (Options.Tenants).
	tenants map[string]string
	stop    func()
}

func newFixture(t *testing.T, timeout time.Duration) *fixture {
	t.Helper()
	f := &fixture{t: t, state: t.TempDir()}
	f.start(timeout)
	return f
}

func (f *fixture) start(timeout time.Duration) {
	t := f.t
	f.queue = NewQueue(timeout)
	var lg *ledger.Ledger
	if f.caps != nil {
		var err error
		if lg, err = ledger.Open(filepath.Join(f.state, "serve", "ledger.db"), ledger.Options{Caps: *f.caps}); err != nil {
			t.Fatal(err)
		}
	}
	f.ledger = lg
	host, err := NewLocal(LocalOptions{Build: f.build, Queue: f.queue, StateDir: filepath.Join(f.state, "serve"), Ledger: lg})
	if err != nil {
		t.Fatal(err)
	}
	f.host = host
	s, err := New(Options{Host: host, Queue: f.queue, Token: testToken, Ledger: lg, Tenants: f.tenants})
	if err != nil {
		t.Fatal(err)
	}
	srv, q := httptest.NewServer(s), f.queue
	f.srv = srv
	var once sync.Once
	f.stop = func() {
		once.Do(func() {
			srv.Close()
			q.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_ = host.Close(ctx)
			if lg != nil {
				_ = lg.Close()
			}
		})
	}
	t.Cleanup(f.stop)
}

func (f *fixture) build(_ context.Context, req CreateRequest) (guarded.Options, error) {
	sc, err := scripted.Parse([]byte(req.Model))
	if err != nil {
		return guarded.Options{}, err
	}
	deploy := tool.New(tool.Spec{
		Name: "deploy", Description: "Deploys.", Effect: tool.Irreversible,
		Schema: []byte(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"],"additionalProperties":false}`),
	}, func(_ context.Context, a struct {
		Env string `json:"env"`
	}) (string, error) {
		f.deploys.Add(1)
		return "deployed " + a.Env, nil
	})
	wait := tool.New(tool.Spec{
		Name: "wait", Description: "Waits.", Effect: tool.ReadOnly,
		Schema: []byte(`{"type":"object","properties":{"ms":{"type":"integer"}},"additionalProperties":false}`),
	}, func(ctx context.Context, a struct {
		MS int `json:"ms"`
	}) (string, error) {
		d := time.Hour
		if a.MS > 0 {
			d = time.Duration(a.MS) * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(d):
			return "waited", nil
		}
	})
	opts := guarded.Options{
		WorkDir: req.Workdir, Model: scripted.New("scripted:test", sc), Tools: []tool.Tool{deploy, wait},
		AuditDir: filepath.Join(f.state, "audit"), RollbackDir: filepath.Join(f.state, "rollback"),
		Environ: []string{"PATH=/usr/bin"}, NoSystem: true,
	}
	if f.sessionCaps != nil {
		opts.Ledger = &ledger.Account{Caps: *f.sessionCaps}
	}
	return opts, nil
}

// do sends a request with the token and returns the status and body.
func (f *fixture) do(method, path, body string) (int, string) {
	f.t.Helper()
	return f.doTok(method, path, body, testToken)
}

func (f *fixture) doTok(method, path, body, token string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// create starts a session playing script and returns its id.
func (f *fixture) create(script string) string {
	f.t.Helper()
	body, _ := json.Marshal(map[string]any{"task": "test task", "model": script, "workdir": f.t.TempDir()})
	code, out := f.do("POST", "/v1/sessions", string(body))
	if code != http.StatusCreated {
		f.t.Fatalf("create: %d %s", code, out)
	}
	var c struct{ ID string }
	if err := json.Unmarshal([]byte(out), &c); err != nil || c.ID == "" {
		f.t.Fatalf("create: no id in %s", out)
	}
	return c.ID
}

// approval waits for the session's first pending approval.
func (f *fixture) approval(session string) Approval {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if ps := f.queue.Pending(session); len(ps) > 0 {
			return ps[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatalf("session %s asked nothing", session)
	return Approval{}
}

// ended waits for the session's end and returns it.
func (f *fixture) ended(id string) Info {
	f.t.Helper()
	h, err := f.host.get(id)
	if err != nil {
		f.t.Fatal(err)
	}
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
		f.t.Fatalf("session %s did not end", id)
	}
	i, _ := f.host.Session(id)
	return i
}

// auditVerdicts are the verdict records of a session's log: tool → decision.
func (f *fixture) auditVerdicts(id string) []string {
	f.t.Helper()
	code, body := f.do("GET", "/v1/sessions/"+id+"/audit", "")
	if code != 200 {
		f.t.Fatalf("audit: %d %s", code, body)
	}
	var out []string
	for line := range strings.Lines(body) {
		var r struct{ Type, Tool, Decision, Gate, Reason string }
		if strings.TrimSpace(line) == "" || json.Unmarshal([]byte(line), &r) != nil || r.Type != "verdict" {
			continue
		}
		out = append(out, r.Tool+":"+r.Decision)
	}
	return out
}

const deployScript = `{"turns":[{"text":"go","calls":[{"tool":"deploy","args":{"env":"prod"}}]},{"text":"done"}]}`

func TestApprovalDenyApproveAndStaleTokens(t *testing.T) {
	f := newFixture(t, time.Minute)
	for _, c := range []struct {
		decision string
		want     string
		deploys  int32
	}{{"deny", "deploy:deny", 0}, {"approve", "deploy:allow", 1}} {
		t.Run(c.decision, func(t *testing.T) {
			before := f.deploys.Load()
			id := f.create(deployScript)
			a := f.approval(id)
			// The whole call is shown, and the listing has the contract's fields.
			code, list := f.do("GET", "/v1/approvals", "")
			if code != 200 {
				t.Fatalf("list: %d %s", code, list)
			}
			var l struct{ Approvals []map[string]any }
			_ = json.Unmarshal([]byte(list), &l)
			if len(l.Approvals) != 1 {
				t.Fatalf("want one pending approval, got %s", list)
			}
			for _, k := range []string{"id", "session", "tool", "args", "gate", "reason", "expires", "token"} {
				if _, ok := l.Approvals[0][k]; !ok {
					t.Errorf("approval lacks %q: %s", k, list)
				}
			}
			if a.Tool != "deploy" || string(a.Args) != `{"env":"prod"}` || a.Gate == "" || a.Reason == "" || a.Effect != "irreversible" || a.Undoable || a.Task != "test task" {
				t.Errorf("approval does not show the whole call: %+v", a)
			}
			// Another approval's token, or none, is refused.
			if code, body := f.do("POST", "/v1/approvals/"+a.ID, `{"token":"not-the-token","decision":"approve"}`); code != http.StatusConflict {
				t.Errorf("a wrong token: %d %s, want 409", code, body)
			}
			if code, body := f.do("POST", "/v1/approvals/"+a.ID, fmt.Sprintf(`{"token":%q,"decision":%q}`, a.Token, c.decision)); code != 200 {
				t.Fatalf("answer: %d %s", code, body)
			}
			if code, body := f.do("POST", "/v1/approvals/"+a.ID, fmt.Sprintf(`{"token":%q,"decision":"approve"}`, a.Token)); code != http.StatusConflict {
				t.Errorf("a reused token: %d %s, want 409", code, body)
			}
			info := f.ended(id)
			if info.Stop == nil || info.Stop.Reason != "done" {
				t.Errorf("stop: %+v", info.Stop)
			}
			if got := f.auditVerdicts(id); len(got) != 1 || got[0] != c.want {
				t.Errorf("verdicts %v, want [%s]", got, c.want)
			}
			if got := f.deploys.Load() - before; got != c.deploys {
				t.Errorf("deploy ran %d times, want %d", got, c.deploys)
			}
		})
	}
}

func TestApprovalTimeoutIsNo(t *testing.T) {
	f := newFixture(t, 300*time.Millisecond)
	id := f.create(deployScript)
	a := f.approval(id)
	f.ended(id)
	if got := f.auditVerdicts(id); len(got) != 1 || got[0] != "deploy:deny" {
		t.Errorf("verdicts %v, want a deny", got)
	}
	if code, body := f.do("POST", "/v1/approvals/"+a.ID, fmt.Sprintf(`{"token":%q,"decision":"approve"}`, a.Token)); code != http.StatusConflict {
		t.Errorf("an answer after the timeout: %d %s, want 409", code, body)
	}
	if f.deploys.Load() != 0 {
		t.Error("deploy ran without a yes")
	}
}

func TestAuthEveryRoute(t *testing.T) {
	f := newFixture(t, time.Minute)
	for _, r := range routes {
		path := strings.ReplaceAll(r.path, "{id}", "x")
		for _, tok := range []string{"", "wrong-token-0123456789", testToken + "x"} {
			if code, body := f.doTok(r.method, path, "{}", tok); code != http.StatusUnauthorized {
				t.Errorf("%s %s with token %q: %d %s, want 401", r.method, path, tok, code, body)
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, time.Minute)
	for _, c := range []struct {
		name, method, path, body string
		code                     int
		says                     string
	}{
		{"unknown field", "POST", "/v1/sessions", `{"task":"t","workdir":"/tmp","bogus":1}`, 400, `"bogus"`},
		{"wrong type", "POST", "/v1/sessions", `{"task":7,"workdir":"/tmp"}`, 400, `task`},
		{"wrong type nested", "POST", "/v1/sessions", `{"task":"t","workdir":"/tmp","limits":{"max_steps":"ten"}}`, 400, `max_steps`},
		{"unknown nested", "POST", "/v1/sessions", `{"task":"t","workdir":"/tmp","limits":{"steps":3}}`, 400, `steps`},
		{"no task", "POST", "/v1/sessions", `{"workdir":"/tmp"}`, 400, `"task"`},
		{"no workdir", "POST", "/v1/sessions", `{"task":"t"}`, 400, `"workdir"`},
		{"bad timeout", "POST", "/v1/sessions", `{"task":"t","workdir":"/tmp","limits":{"timeout":"soon"}}`, 400, `limits.timeout`},
		{"not json", "POST", "/v1/sessions", `task=t`, 400, `request body`},
		{"empty", "POST", "/v1/sessions", ``, 400, `empty`},
		{"trailing", "POST", "/v1/sessions", `{"task":"t","workdir":"/tmp"} {}`, 400, `after the JSON value`},
		{"builder refuses", "POST", "/v1/sessions", `{"task":"t","workdir":"/tmp","model":"not a script"}`, 400, `script`},
		{"reply unknown field", "POST", "/v1/approvals/ap-x", `{"token":"t","decision":"deny","who":"me"}`, 400, `"who"`},
		{"reply bad decision", "POST", "/v1/approvals/ap-x", `{"token":"t","decision":"maybe"}`, 400, `decision`},
		{"reply no token", "POST", "/v1/approvals/ap-x", `{"decision":"deny"}`, 400, `token`},
		{"reply wrong type", "POST", "/v1/approvals/ap-x", `{"token":1,"decision":"deny"}`, 400, `token`},
		{"answer unknown approval", "POST", "/v1/approvals/ap-x", `{"token":"t","decision":"deny"}`, 409, `stale`},
		{"get unknown approval", "GET", "/v1/approvals/ap-x", ``, 404, `not pending`},
		{"ask unknown field", "POST", "/v1/approvals", `{"session":"s","kind":"call","tool":"x","nope":true}`, 400, `"nope"`},
		{"ask bad kind", "POST", "/v1/approvals", `{"session":"s","kind":"poll"}`, 400, `kind`},
		{"missing session", "GET", "/v1/sessions/nosuch", ``, 404, `nosuch`},
		{"missing session events", "GET", "/v1/sessions/nosuch/events", ``, 404, `nosuch`},
		{"missing session abort", "POST", "/v1/sessions/nosuch/abort", ``, 404, `nosuch`},
		{"missing session rollback", "POST", "/v1/sessions/nosuch/rollback", ``, 404, `nosuch`},
		{"missing session audit", "GET", "/v1/sessions/nosuch/audit", ``, 404, `nosuch`},
		{"missing session verify", "GET", "/v1/sessions/nosuch/audit/verify", ``, 404, `nosuch`},
		{"abort unknown field", "POST", "/v1/abort", `{"why":"x"}`, 400, `"why"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := f.do(c.method, c.path, c.body)
			var e apiError
			if json.Unmarshal([]byte(body), &e) != nil || e.Error == "" || strings.Contains(e.Error, "\n") {
				t.Errorf("the error is not one line in JSON: %s", body)
			}
			if code != c.code || !strings.Contains(e.Error, c.says) {
				t.Errorf("%d %s, want %d naming %s", code, e.Error, c.code, c.says)
			}
		})
	}
}

// sse reads a session's event stream to its end.
func (f *fixture) sse(id string) []map[string]any {
	f.t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+"/v1/sessions/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		f.t.Fatalf("content type %q", ct)
	}
	var evs []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				f.t.Fatalf("an event is not one JSON object: %q", d)
			}
			evs = append(evs, m)
		}
	}
	return evs
}

func TestEventStream(t *testing.T) {
	f := newFixture(t, time.Minute)
	id := f.create(deployScript)
	var evs []map[string]any
	var wg sync.WaitGroup
	wg.Go(func() { evs = f.sse(id) })
	a := f.approval(id)
	if code, body := f.do("POST", "/v1/approvals/"+a.ID, fmt.Sprintf(`{"token":%q,"decision":"approve"}`, a.Token)); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	wg.Wait()
	var types []string
	for _, e := range evs {
		types = append(types, e["type"].(string))
		if e["session"] != id {
			t.Errorf("event of another session: %v", e)
		}
	}
	want := "text approval approval_answer tool_call verdict result text stop"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	// A late subscriber gets the whole stream too.
	if late := f.sse(id); len(late) != len(evs) {
		t.Errorf("a late subscriber got %d events, want %d", len(late), len(evs))
	}
}

func TestAbortStopsASessionMidTool(t *testing.T) {
	f := newFixture(t, time.Minute)
	id := f.create(`{"turns":[{"text":"go","calls":[{"tool":"wait","args":{}}]},{"text":"done"}]}`)
	other := f.create(`{"turns":[{"text":"go","calls":[{"tool":"wait","args":{}}]},{"text":"done"}]}`)
	waitStep(t, f, id)
	if code, body := f.do("POST", "/v1/sessions/"+id+"/abort", `{"reason":"test abort"}`); code != http.StatusAccepted {
		t.Fatalf("abort: %d %s", code, body)
	}
	if i := f.ended(id); i.Stop == nil || i.Stop.Reason != "aborted" {
		t.Errorf("stop: %+v", i.Stop)
	}
	if i, _ := f.host.Session(other); i.State != StateRunning {
		t.Errorf("abort of one session stopped another: %+v", i)
	}
	code, body := f.do("POST", "/v1/abort", "")
	if code != http.StatusAccepted || !strings.Contains(body, `"aborted": 1`) {
		t.Errorf("abort all: %d %s", code, body)
	}
	if i := f.ended(other); i.Stop == nil || i.Stop.Reason != "aborted" {
		t.Errorf("stop: %+v", i.Stop)
	}
	code, body = f.do("GET", "/v1/sessions/"+id, "")
	if code != 200 || !strings.Contains(body, `"stop"`) || !strings.Contains(body, `"aborted"`) {
		t.Errorf("get: %d %s", code, body)
	}
	code, body = f.do("GET", "/v1/sessions/"+id+"/audit/verify", "")
	if code != 200 || !strings.Contains(body, `"complete": true`) || !strings.Contains(body, `"first_bad": 0`) {
		t.Errorf("verify: %d %s", code, body)
	}
}

// waitStep waits until the session has made its first model call.
func waitStep(t *testing.T, f *fixture, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if i, _ := f.host.Session(id); i.Step >= 1 {
			time.Sleep(50 * time.Millisecond) // the tool has started, or is about to: either way abort must stop it
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("session %s made no step", id)
}

func TestRestartListsInterruptedSessions(t *testing.T) {
	f := newFixture(t, time.Minute)
	done := f.create(`{"turns":[{"text":"done"}]}`)
	f.ended(done)
	stuck := f.create(deployScript)
	f.approval(stuck)
	// A second server over the same state, as after a kill: the first's
	// session is still waiting, but this one knows it only from disk.
	old := f.queue
	f.start(time.Minute)
	code, body := f.do("GET", "/v1/sessions/"+stuck, "")
	if code != 200 || !strings.Contains(body, `"state": "interrupted"`) || !strings.Contains(body, "rein resume "+stuck) {
		t.Errorf("after restart: %d %s", code, body)
	}
	code, body = f.do("GET", "/v1/sessions/"+done, "")
	if code != 200 || !strings.Contains(body, `"state": "ended"`) || !strings.Contains(body, `"reason": "done"`) {
		t.Errorf("after restart: %d %s", code, body)
	}
	if ps := f.queue.Pending(""); len(ps) != 0 {
		t.Errorf("a restarted server has pending approvals of the dead one: %v", ps)
	}
	if evs := f.sse(done); len(evs) == 0 || evs[len(evs)-1]["type"] != "stop" {
		t.Errorf("events of an ended session after restart: %v", evs)
	}
	old.Close()
}
