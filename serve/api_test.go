package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/approve"
)

// TestOpenAPIMatchesHandlers holds /v1/openapi.json and the mux to each
// other: every route the server registers is described, every described
// operation is registered, and each reaches its own handler (not the
// mux's 404 or 405).
func TestOpenAPIMatchesHandlers(t *testing.T) {
	f := newFixture(t, time.Minute)
	code, body := f.do("GET", "/v1/openapi.json", "")
	if code != 200 {
		t.Fatalf("openapi: %d", code)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("not an OpenAPI 3 document: %v", err)
	}
	var described, served []string
	for p, ops := range doc.Paths {
		for m := range ops {
			if m == "parameters" {
				continue
			}
			described = append(described, strings.ToUpper(m)+" "+p)
		}
	}
	for _, r := range routes {
		served = append(served, r.method+" "+r.path)
	}
	slices.Sort(described)
	slices.Sort(served)
	if !slices.Equal(described, served) {
		t.Errorf("the description and the handlers differ:\ndescribed %v\nserved    %v", described, served)
	}
	for _, r := range routes {
		path := strings.ReplaceAll(r.path, "{id}", "nosuch")
		code, body := f.do(r.method, path, "{}")
		var e apiError
		if code == http.StatusMethodNotAllowed || code == http.StatusNotFound && json.Unmarshal([]byte(body), &e) != nil {
			t.Errorf("%s %s did not reach its handler: %d %s", r.method, path, code, body)
		}
	}
}

func TestQuestionGoesThroughTheQueue(t *testing.T) {
	q := NewQueue(time.Minute)
	a := &sessionApprover{q: q, h: &hosted{info: Info{ID: "s1", Task: "t"}}}
	type got struct {
		text string
		err  error
	}
	res := make(chan got, 1)
	go func() {
		text, err := a.Ask(t.Context(), "which branch?")
		res <- got{text, err}
	}()
	var ap Approval
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if ps := q.Pending("s1"); len(ps) == 1 {
			ap = ps[0]
			break
		}
	}
	if ap.Kind != KindQuestion || ap.Question != "which branch?" {
		t.Fatalf("pending: %+v", ap)
	}
	if _, err := q.Answer(ap.ID, Reply{Token: ap.Token, Decision: DecisionApprove}, "test"); err == nil {
		t.Error("a question took approve for an answer")
	}
	if _, err := q.Answer(ap.ID, Reply{Token: ap.Token, Decision: DecisionAnswer, Text: "main"}, "test"); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.text != "main" || r.err != nil {
		t.Errorf("ask: %q %v", r.text, r.err)
	}
}

func TestStickyScopeOnlyWhereOffered(t *testing.T) {
	q := NewQueue(time.Minute)
	a := &sessionApprover{q: q, h: &hosted{info: Info{ID: "s1"}}}
	for _, c := range []struct {
		name, pattern, scope string
		wantErr              bool
		want                 approve.Scope
	}{
		{"no pattern, once", "", "once", false, approve.Once},
		{"no pattern, session refused", "", "session", true, approve.Once},
		{"pattern, session", "git status", "session", false, approve.Session},
		{"pattern, always", "git status", "always", false, approve.Always},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			res := make(chan approve.Answer, 1)
			go func() {
				ans, _ := approve.Choose(ctx, a, approve.Request{Tool: "run_bash", Args: json.RawMessage(`{}`), Gate: "g", Reason: "r", Pattern: c.pattern})
				res <- ans
			}()
			var ap Approval
			for ap.ID == "" && ctx.Err() == nil {
				if ps := q.Pending("s1"); len(ps) == 1 {
					ap = ps[0]
				}
				time.Sleep(time.Millisecond)
			}
			_, err := q.Answer(ap.ID, Reply{Token: ap.Token, Decision: DecisionApprove, Scope: c.scope}, "test")
			if (err != nil) != c.wantErr {
				t.Fatalf("answer: %v", err)
			}
			if err != nil {
				cancel()
				<-res
				return
			}
			ans := <-res
			if !ans.Yes || ans.Scope != c.want || (c.want != approve.Once && ans.Pattern != c.pattern) || ans.By != "test" {
				t.Errorf("answer %+v", ans)
			}
		})
	}
}

// TestRemoteApprover is rein run --approvals: the CLI's question waits in
// the server's queue and the answer posted there comes back.
func TestRemoteApprover(t *testing.T) {
	f := newFixture(t, time.Minute)
	r := &Remote{URL: f.srv.URL, Token: testToken, Session: "cli-1", Task: "cron task", Timeout: 10 * time.Second,
		Effect: func(string) (string, bool) { return "irreversible", false }}
	for _, c := range []struct {
		decision string
		yes      bool
	}{{"deny", false}, {"approve", true}} {
		res := make(chan bool, 1)
		go func() {
			yes, _ := r.Approve(t.Context(), approve.Request{Tool: "send_email", Args: json.RawMessage(`{"to":"a@b.c"}`), Gate: "approval", Reason: "irreversible"})
			res <- yes
		}()
		a := f.approval("cli-1")
		if a.Tool != "send_email" || a.Task != "cron task" || a.Effect != "irreversible" {
			t.Errorf("remote approval: %+v", a)
		}
		if code, body := f.do("POST", "/v1/approvals/"+a.ID, fmt.Sprintf(`{"token":%q,"decision":%q}`, a.Token, c.decision)); code != 200 {
			t.Fatalf("answer: %d %s", code, body)
		}
		if got := <-res; got != c.yes {
			t.Errorf("%s: remote approver said %v", c.decision, got)
		}
	}
	// A server that is not there, or a wrong token, is No.
	bad := &Remote{URL: f.srv.URL, Token: "wrong-token-0123456789", Session: "cli-1", Timeout: time.Second}
	if yes, err := bad.Approve(t.Context(), approve.Request{Tool: "x"}); yes || err == nil {
		t.Errorf("wrong token: %v %v", yes, err)
	}
	gone := &Remote{URL: "http://127.0.0.1:1", Token: testToken, Session: "cli-1", Timeout: time.Second}
	if yes, err := gone.Approve(t.Context(), approve.Request{Tool: "x"}); yes || err == nil {
		t.Errorf("no server: %v %v", yes, err)
	}
	// No answer in time is No.
	short := &Remote{URL: f.srv.URL, Token: testToken, Session: "cli-2", Timeout: 200 * time.Millisecond}
	if yes, err := short.Approve(t.Context(), approve.Request{Tool: "x", Gate: "g", Reason: "r"}); yes || err != nil {
		t.Errorf("timeout: %v %v", yes, err)
	}
}

// TestWebhook checks the notification's body and its retries against a
// local receiver that fails twice, and that a receiver that never answers
// holds up no session.
func TestWebhook(t *testing.T) {
	var (
		mu    sync.Mutex
		tries int
		got   []Notification
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		tries++
		if tries <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var n Notification
		if err := json.Unmarshal(b, &n); err != nil {
			t.Errorf("webhook body is not JSON: %s", b)
		}
		got = append(got, n)
	}))
	defer recv.Close()
	n := NewNotifier(NotifierOptions{URL: recv.URL, PageURL: "http://page", Backoff: time.Millisecond})
	n.Asked(Approval{ID: "ap-1", Session: "s1", Kind: KindCall, Tool: "deploy", Gate: "approval", Reason: "irreversible", Token: "secret-token", Expires: time.Now()})
	n.Stopped(Info{ID: "s1", Stop: &StopInfo{Reason: "done"}})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		mu.Lock()
		k := len(got)
		mu.Unlock()
		if k == 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	n.Close(ctx)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("got %d notifications after %d tries", len(got), tries)
	}
	if a := got[0]; a.Kind != "approval" || !strings.Contains(a.Text, "deploy") || a.Link != "http://page/sessions/s1" || a.Approval == nil || a.Approval.Token != "" {
		t.Errorf("approval notification: %+v", a)
	}
	if s := got[1]; s.Kind != "stop" || !strings.Contains(s.Text, "done") || s.Stop == nil {
		t.Errorf("stop notification: %+v", s)
	}

	// A receiver that hangs: sending returns at once, whatever the queue holds.
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hang.Close()
	defer close(release)
	slow := NewNotifier(NotifierOptions{URL: hang.URL, Queue: 2, Backoff: time.Millisecond})
	done := make(chan struct{})
	go func() {
		for i := range 50 {
			slow.Asked(Approval{ID: fmt.Sprint(i), Session: "s"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a hanging webhook blocked the sender")
	}
	cctx, ccancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer ccancel()
	slow.Close(cctx)
}

// TestManySessions runs many concurrent sessions that each ask once and
// are answered yes or no by their parity: every session gets its own
// answer, and every event reaches its stream.
func TestManySessions(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 20
	}
	f := newFixture(t, time.Minute)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = f.create(deployScript)
	}
	want := map[string]string{}
	answered := 0
	for deadline := time.Now().Add(60 * time.Second); answered < n && time.Now().Before(deadline); {
		for _, a := range f.queue.Pending("") {
			d := "deny"
			if slices.Index(ids, a.Session)%2 == 0 {
				d = "approve"
			}
			if _, err := f.queue.Answer(a.ID, Reply{Token: a.Token, Decision: d}, "test"); err != nil {
				t.Fatal(err)
			}
			want[a.Session] = map[string]string{"approve": "deploy:allow", "deny": "deploy:deny"}[d]
			answered++
		}
		time.Sleep(2 * time.Millisecond)
	}
	if answered != n {
		t.Fatalf("%d of %d sessions asked", answered, n)
	}
	for _, id := range ids {
		f.ended(id)
		if got := f.auditVerdicts(id); len(got) != 1 || got[0] != want[id] {
			t.Errorf("session %s: verdicts %v, want %s", id, got, want[id])
		}
		evs, _, ended, _ := f.host.Events(id, 0)
		if !ended || len(evs) != map[string]int{"deploy:allow": 8, "deploy:deny": 7}[want[id]] {
			t.Errorf("session %s: %d events (ended %v)", id, len(evs), ended)
		}
	}
	if int(f.deploys.Load()) != n/2 {
		t.Errorf("deploy ran %d times, want %d", f.deploys.Load(), n/2)
	}
}
