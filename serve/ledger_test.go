package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/agent/stop"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/ledger"
)

// spend is a session that makes one model call billed 120 tokens.
const spend = `{"turns":[{"text":"done","usage":{"input":100,"output":20}}]}`

// createAs starts a session playing script for tenant.
func (f *fixture) createAs(script, tenant string) string {
	f.t.Helper()
	body, _ := json.Marshal(map[string]any{"task": "test task", "model": script, "workdir": f.t.TempDir(), "tenant": tenant})
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

func (f *fixture) report() ledger.Report {
	f.t.Helper()
	code, body := f.do("GET", "/v1/ledger", "")
	if code != 200 {
		f.t.Fatalf("GET /v1/ledger: %d %s", code, body)
	}
	var rep ledger.Report
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		f.t.Fatal(err)
	}
	return rep
}

// wantBudgetStop checks that a session stopped on the shared cap scope,
// before any model call.
func wantBudgetStop(t *testing.T, i Info, scope string) {
	t.Helper()
	if i.Stop == nil || i.Stop.Reason != stop.Budget || !strings.Contains(i.Stop.Error, scope+" tokens cap reached") ||
		!strings.Contains(i.Stop.Error, "resets at") || i.Tokens != 0 {
		t.Fatalf("session %s: want stop budget on the %s cap before any call, got %+v %+v", i.ID, scope, i.Stop, i)
	}
}

// The Done-when line: a per-day cap stops a second session once the first
// used it up, also after the server is restarted on the same state.
func TestDayCapStopsASecondSessionAlsoAfterRestart(t *testing.T) {
	f := &fixture{t: t, state: t.TempDir(), caps: &ledger.Caps{DayTokens: 100}}
	f.start(time.Minute)
	first := f.ended(f.create(spend))
	if first.Stop == nil || first.Stop.Reason != stop.Done || first.Tokens != 120 {
		t.Fatalf("the first session, under the cap: %+v", first.Stop)
	}
	wantBudgetStop(t, f.ended(f.create(spend)), "day")
	if v := f.auditVerdicts(first.ID); len(v) != 0 {
		t.Errorf("the first session had verdicts %v", v)
	}

	f.stop() // the server goes; its ledger file stays
	f.start(time.Minute)
	wantBudgetStop(t, f.ended(f.create(spend)), "day")
	rep := f.report()
	if len(rep.Days) != 1 || rep.Days[0].Tokens != 120 || rep.Days[0].Calls != 1 || len(rep.Sessions) != 1 || rep.Sessions[0].Session != first.ID {
		t.Errorf("ledger after restart: %+v", rep)
	}
}

// A tenant's cap stops that tenant's sessions only; another tenant goes on.
func TestTenantCap(t *testing.T) {
	f := &fixture{t: t, state: t.TempDir(), caps: &ledger.Caps{TenantTokens: 100}}
	f.start(time.Minute)
	if i := f.ended(f.createAs(spend, "acme")); i.Stop.Reason != stop.Done || i.Tenant != "acme" {
		t.Fatalf("acme's first session: %+v", i)
	}
	wantBudgetStop(t, f.ended(f.createAs(spend, "acme")), "tenant acme")
	if i := f.ended(f.createAs(spend, "globex")); i.Stop.Reason != stop.Done {
		t.Errorf("another tenant was stopped: %+v", i.Stop)
	}
	rep := f.report()
	if len(rep.Tenants) != 2 || rep.Tenants[0].Tenant != "acme" || rep.Tenants[0].Tokens != 120 || rep.Tenants[1].Tenant != "globex" {
		t.Errorf("tenants %+v", rep.Tenants)
	}
	// A bad tenant is a 400 naming the field.
	code, body := f.do("POST", "/v1/sessions", `{"task":"t","workdir":"`+t.TempDir()+`","tenant":"../x"}`)
	if code != 400 || !strings.Contains(body, `field \"tenant\"`) {
		t.Errorf("bad tenant: %d %s", code, body)
	}
}

// A session's own caps (its project's [budget]) narrow the server's, and
// never widen them.
func TestSessionCapsOnlyNarrow(t *testing.T) {
	f := &fixture{t: t, state: t.TempDir(), caps: &ledger.Caps{DayTokens: 1000}, sessionCaps: &ledger.Caps{DayTokens: 100}}
	f.start(time.Minute)
	if i := f.ended(f.create(spend)); i.Stop.Reason != stop.Done {
		t.Fatalf("first: %+v", i.Stop)
	}
	wantBudgetStop(t, f.ended(f.create(spend)), "day") // 120 of the session's 100
	f.stop()
	f.sessionCaps = &ledger.Caps{DayTokens: 1 << 40}
	f.caps = &ledger.Caps{DayTokens: 120}
	f.start(time.Minute)
	wantBudgetStop(t, f.ended(f.create(spend)), "day") // a looser session cap lifts nothing
}

// The ledger API: a run elsewhere reserves and settles; a cap's refusal is
// a 429 that says which cap; bad input is a 400 naming the field.
func TestLedgerAPI(t *testing.T) {
	f := &fixture{t: t, state: t.TempDir(), caps: &ledger.Caps{DayCostUSD: 1}}
	f.start(time.Minute)
	rl := &RemoteLedger{URL: f.srv.URL, Token: testToken, Tenant: "ci"}
	ticket, err := rl.Reserve(t.Context(), budget.Charge{Session: "cli-1", Tokens: 10, CostUSD: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if err := rl.Settle(t.Context(), ticket, budget.Charge{Tokens: 500, CostUSD: 1.5}); err != nil {
		t.Fatal(err)
	}
	_, err = rl.Reserve(t.Context(), budget.Charge{Session: "cli-1", Tokens: 10})
	var ex *budget.ExceededError
	if !errors.As(err, &ex) || ex.Scope != "day" || ex.Limit != budget.Cost || ex.Max != "$1.0000" || ex.Resets.IsZero() {
		t.Fatalf("over the day's cost cap: %v", err)
	}
	if err := rl.Settle(t.Context(), ticket, budget.Charge{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a ticket settled twice: %v", err)
	}
	if rep := f.report(); len(rep.Sessions) != 1 || rep.Sessions[0].Tenant != "ci" || rep.Sessions[0].CostUSD != 1.5 {
		t.Errorf("report %+v", rep)
	}
	for _, c := range []struct{ path, body, field string }{
		{"/v1/ledger/reserve", `{"tokens":1,"cost_usd":0}`, `field \"session\"`},
		{"/v1/ledger/reserve", `{"session":"s","tenant":"a b","tokens":1,"cost_usd":0}`, `field \"tenant\"`},
		{"/v1/ledger/reserve", `{"session":"s","tokens":-1,"cost_usd":0}`, `field \"tokens\"`},
		{"/v1/ledger/reserve", `{"session":"s","tokens":1,"cost_usd":-2}`, `field \"cost_usd\"`},
		{"/v1/ledger/reserve", `{"session":"s","tokens":"many","cost_usd":0}`, `tokens`},
		{"/v1/ledger/reserve", `{"session":"s","tokens":1,"cost_usd":0,"caps":{"day_max_tokens":-1}}`, `field \"caps\"`},
		{"/v1/ledger/reserve", `{"session":"s","tokens":1,"cost_usd":0,"caps":{"day_max_tokenz":1}}`, `day_max_tokenz`},
		{"/v1/ledger/reserve", `{"session":"s","tokens":1,"cost_usd":0,"extra":1}`, `extra`},
		{"/v1/ledger/settle", `{"tokens":1,"cost_usd":0}`, `field \"ticket\"`},
		{"/v1/ledger/settle", `{"ticket":"x","tokens":-1,"cost_usd":0}`, `field \"tokens\"`},
	} {
		code, body := f.do("POST", c.path, c.body)
		if code != 400 || !strings.Contains(body, c.field) {
			t.Errorf("%s %s: %d %s, want 400 naming %s", c.path, c.body, code, body, c.field)
		}
	}
	if code, _ := f.doTok("POST", "/v1/ledger/reserve", `{"session":"s","tokens":1,"cost_usd":0}`, "wrong-token-0123456789"); code != 401 {
		t.Errorf("reserve without the token: %d", code)
	}
	if code, body := f.do("POST", "/v1/ledger/settle", `{"ticket":"nosuch","tokens":1,"cost_usd":0}`); code != 404 || !strings.Contains(body, "ticket") {
		t.Errorf("unknown ticket: %d %s", code, body)
	}
}

// The attack: a session races many model calls at once through the API to
// get past the cap before any is settled. Each admitted call holds its
// reservation before the next is judged, so exactly as many pass as the
// cap holds, and the day's total is what they used.
func TestRacingCallsCannotEscapeTheCap(t *testing.T) {
	f := &fixture{t: t, state: t.TempDir(), caps: &ledger.Caps{DayTokens: 1000}}
	f.start(time.Minute)
	rl := &RemoteLedger{URL: f.srv.URL, Token: testToken}
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Half as one session, half as many: neither gets past.
			s := "racer"
			if i%2 == 1 {
				s = fmt.Sprint("racer-", i)
			}
			ticket, err := rl.Reserve(context.Background(), budget.Charge{Session: s, Tokens: 100})
			if errors.Is(err, budget.ErrExceeded) {
				refused.Add(1)
				return
			}
			if err != nil {
				t.Errorf("reserve: %v", err)
				return
			}
			admitted.Add(1)
			if err := rl.Settle(context.Background(), ticket, budget.Charge{Tokens: 100}); err != nil {
				t.Errorf("settle: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	rep := f.report()
	if admitted.Load() != 10 || refused.Load() != 38 || len(rep.Days) != 1 || rep.Days[0].Tokens != 1000 || len(rep.InFlight) != 0 {
		t.Errorf("admitted %d, refused %d; the day: %+v", admitted.Load(), refused.Load(), rep.Days)
	}
}

// A run pointing at a server that is gone fails closed with a clear error.
func TestRemoteLedgerUnreachable(t *testing.T) {
	f := &fixture{t: t, state: t.TempDir(), caps: &ledger.Caps{}}
	f.start(time.Minute)
	url := f.srv.URL
	f.stop()
	_, err := (&RemoteLedger{URL: url, Token: testToken}).Reserve(t.Context(), budget.Charge{Session: "s", Tokens: 1})
	if err == nil || !strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("unreachable server: %v", err)
	}
	if errors.Is(err, budget.ErrExceeded) {
		t.Error("an unreachable server passed for a cap")
	}
}

// A token bound to a tenant spends that tenant's budget whatever the
// request names, and may do nothing but create sessions, ask approvals
// and reserve and settle calls.
func TestTenantToken(t *testing.T) {
	const acmeToken = "acme-token-0123456789abcdef"
	f := &fixture{t: t, state: t.TempDir(), caps: &ledger.Caps{TenantTokens: 100}, tenants: map[string]string{acmeToken: "acme"}}
	f.start(time.Minute)
	body := func(tenant string) string {
		b, _ := json.Marshal(map[string]any{"task": "t", "model": spend, "workdir": t.TempDir(), "tenant": tenant})
		return string(b)
	}
	code, out := f.doTok("POST", "/v1/sessions", body(""), acmeToken)
	if code != http.StatusCreated {
		t.Fatalf("create with acme's token: %d %s", code, out)
	}
	var c struct{ ID, Tenant string }
	_ = json.Unmarshal([]byte(out), &c)
	if i := f.ended(c.ID); c.Tenant != "acme" || i.Stop.Reason != stop.Done {
		t.Fatalf("acme's session: tenant %q, %+v", c.Tenant, i.Stop)
	}
	// Naming another tenant to escape acme's spent cap is refused.
	if code, out := f.doTok("POST", "/v1/sessions", body("globex"), acmeToken); code != http.StatusForbidden || !strings.Contains(out, `field \"tenant\"`) {
		t.Errorf("acme's token naming globex: %d %s", code, out)
	}
	if code, out := f.doTok("POST", "/v1/ledger/reserve", `{"session":"x","tenant":"globex","tokens":1,"cost_usd":0}`, acmeToken); code != http.StatusForbidden {
		t.Errorf("acme's token reserving as globex: %d %s", code, out)
	}
	_, err := (&RemoteLedger{URL: f.srv.URL, Token: acmeToken}).Reserve(t.Context(), budget.Charge{Session: "cli", Tokens: 1})
	var ex *budget.ExceededError
	if !errors.As(err, &ex) || ex.Scope != "tenant acme" {
		t.Errorf("acme's token, tenant unnamed, over acme's cap: %v", err)
	}
	// The server's own token still names any tenant.
	if i := f.ended(f.createAs(spend, "globex")); i.Stop.Reason != stop.Done {
		t.Errorf("globex under the server's token: %+v", i.Stop)
	}
	for _, rt := range []struct{ method, path string }{{"GET", "/v1/sessions"}, {"POST", "/v1/abort"}, {"GET", "/v1/approvals"}, {"GET", "/v1/ledger"}, {"POST", "/v1/sessions/" + c.ID + "/abort"}} {
		if code, out := f.doTok(rt.method, rt.path, "{}", acmeToken); code != http.StatusForbidden {
			t.Errorf("%s %s with acme's token: %d %s", rt.method, rt.path, code, out)
		}
	}
	if _, err := New(Options{Host: f.host, Queue: f.queue, Token: testToken, Tenants: map[string]string{testToken: "acme"}}); err == nil {
		t.Error("a tenant token equal to the server's")
	}
}
