package ledger_test

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/ledger"
)

// clock is an injected clock a test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func open(t *testing.T, path string, o ledger.Options) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// call reserves and settles one call of session.
func call(t *testing.T, l *ledger.Ledger, session, tenant string, tokens int64, cost float64) error {
	t.Helper()
	ticket, err := l.Reserve(t.Context(), ledger.Request{Charge: budget.Charge{Session: session, Tokens: tokens, CostUSD: cost}, Tenant: tenant})
	if err != nil {
		return err
	}
	if err := l.Settle(t.Context(), ticket, tokens, cost); err != nil {
		t.Fatalf("settle: %v", err)
	}
	return nil
}

func TestCapsStopCalls(t *testing.T) {
	t.Parallel()
	noon := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		caps   ledger.Caps
		calls  []struct{ tenant string } // each uses 40 tokens, $0.40
		admits int
		scope  string
		limit  budget.Limit
	}{
		{"day tokens", ledger.Caps{DayTokens: 100}, tenants("a", "b", "c", "d"), 3, "day", budget.Tokens},
		{"day cost", ledger.Caps{DayCostUSD: 1}, tenants("a", "b", "c", "d"), 3, "day", budget.Cost},
		{"tenant tokens", ledger.Caps{TenantTokens: 50}, tenants("a", "b", "a", "c", "a"), 4, "tenant a", budget.Tokens},
		{"tenant cost", ledger.Caps{TenantCostUSD: 0.5}, tenants("a", "a", "a"), 2, "tenant a", budget.Cost},
		{"no caps", ledger.Caps{}, tenants("a", "a", "a", "a"), 4, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := open(t, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{Caps: tc.caps, Now: func() time.Time { return noon }})
			defer l.Close()
			admitted := 0
			var last error
			for i, c := range tc.calls {
				err := call(t, l, "s"+string(rune('0'+i)), c.tenant, 40, 0.40)
				if err != nil {
					last = err
					continue
				}
				admitted++
			}
			if admitted != tc.admits {
				t.Fatalf("admitted %d calls, want %d (last refusal: %v)", admitted, tc.admits, last)
			}
			if tc.scope == "" {
				return
			}
			var ex *budget.ExceededError
			if !errors.As(last, &ex) || !errors.Is(last, budget.ErrExceeded) {
				t.Fatalf("refusal %v is not a *budget.ExceededError", last)
			}
			if ex.Scope != tc.scope || ex.Limit != tc.limit || !ex.Resets.Equal(time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("refusal says %q %q resets %v", ex.Scope, ex.Limit, ex.Resets)
			}
		})
	}
}

func tenants(names ...string) []struct{ tenant string } {
	out := make([]struct{ tenant string }, len(names))
	for i, n := range names {
		out[i].tenant = n
	}
	return out
}

// Sessions racing many calls at once get past the cap by at most what one
// call holds beyond it: each admitted call holds its reservation before
// the next is judged. Without reservations all 64 would pass.
func TestRaceCannotEscapeCap(t *testing.T) {
	t.Parallel()
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{Caps: ledger.Caps{DayTokens: 1000}})
	defer l.Close()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// A distinct session per call: one session's second
			// reservation would charge its first, which is no race.
			s := "race-" + string(rune('A'+i%26)) + string(rune('a'+i/26))
			ticket, err := l.Reserve(context.Background(), ledger.Request{Charge: budget.Charge{Session: s, Tokens: 100}})
			if err != nil {
				if !errors.Is(err, budget.ErrExceeded) {
					t.Errorf("reserve: %v", err)
				}
				return
			}
			admitted.Add(1)
			if err := l.Settle(context.Background(), ticket, 100, 0); err != nil {
				t.Errorf("settle: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := admitted.Load(); n != 10 {
		t.Errorf("%d calls of 100 tokens admitted under a 1000-token day cap, want 10", n)
	}
	rep, err := l.Report()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Days) != 1 || rep.Days[0].Tokens != 1000 || rep.Days[0].Calls != 10 || len(rep.InFlight) != 0 {
		t.Errorf("report %+v", rep)
	}
}

// Concurrent sessions under no cap: every call is counted exactly once,
// per day, tenant and session.
func TestConcurrentTotals(t *testing.T) {
	t.Parallel()
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	defer l.Close()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				if err := call(t, l, "s"+string(rune('0'+i)), []string{"a", "b"}[i%2], 3, 0.01); err != nil {
					t.Errorf("call: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	rep, err := l.Report()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Days) != 1 || rep.Days[0].Calls != 200 || rep.Days[0].Tokens != 600 {
		t.Errorf("days %+v", rep.Days)
	}
	if len(rep.Tenants) != 2 || rep.Tenants[0].Calls != 100 || rep.Tenants[1].Calls != 100 {
		t.Errorf("tenants %+v", rep.Tenants)
	}
	if len(rep.Sessions) != 8 {
		t.Fatalf("sessions %+v", rep.Sessions)
	}
	for _, s := range rep.Sessions {
		if s.Calls != 25 || s.Tokens != 75 {
			t.Errorf("session %+v", s)
		}
	}
}

// The day is the clock's UTC date: a cap reached today allows calls again
// at midnight UTC, and each day is its own line.
func TestDayRollover(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 12, 5, 23, 59, 0, 0, time.UTC)}
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{Caps: ledger.Caps{DayTokens: 50}, Now: clk.now})
	defer l.Close()
	if err := call(t, l, "s1", "", 60, 0); err != nil {
		t.Fatal(err)
	}
	err := call(t, l, "s1", "", 1, 0)
	var ex *budget.ExceededError
	if !errors.As(err, &ex) || ex.Scope != "day" {
		t.Fatalf("second call on a spent day: %v", err)
	}
	// A clock in another zone counts by its UTC date: 18:30 EST on the
	// 5th is 23:30 UTC, still the spent day; 20:00 EST is the 6th in UTC.
	clk.set(time.Date(2026, 12, 5, 18, 30, 0, 0, time.FixedZone("EST", -5*3600)))
	if err := call(t, l, "s1", "", 1, 0); !errors.Is(err, budget.ErrExceeded) {
		t.Fatalf("23:30 UTC on the spent day: %v", err)
	}
	clk.set(time.Date(2026, 12, 5, 20, 0, 0, 0, time.FixedZone("EST", -5*3600)))
	if err := call(t, l, "s1", "", 4, 0); err != nil {
		t.Fatalf("01:00 UTC on the 6th: %v", err)
	}
	clk.set(time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC))
	if err := call(t, l, "s1", "", 6, 0); err != nil {
		t.Fatalf("a later call of the new day: %v", err)
	}
	rep, err := l.Report()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Days) != 2 || rep.Days[0].Day != "2026-12-05" || rep.Days[0].Tokens != 60 || rep.Days[1].Day != "2026-12-06" || rep.Days[1].Tokens != 10 {
		t.Errorf("days %+v", rep.Days)
	}
}

// A closed and reopened ledger has everything it had: totals, and a
// reservation never settled, which still counts today and is charged as
// it stood when the ledger is opened on a later day.
func TestReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	clk := &clock{t: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)}
	o := ledger.Options{Caps: ledger.Caps{DayTokens: 100}, Now: clk.now}
	l := open(t, path, o)
	if err := call(t, l, "s1", "acme", 50, 0.5); err != nil {
		t.Fatal(err)
	}
	// A call in flight when the process dies.
	if _, err := l.Reserve(t.Context(), ledger.Request{Charge: budget.Charge{Session: "s2", Tokens: 30}, Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l = open(t, path, o)
	if err := call(t, l, "s3", "acme", 20, 0); err != nil {
		t.Fatalf("80 of 100 held: %v", err)
	}
	if err := call(t, l, "s4", "acme", 1, 0); !errors.Is(err, budget.ErrExceeded) {
		t.Fatalf("after a reopen the day's use and the call in flight still count: %v", err)
	}
	rep, err := l.Report()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.InFlight) != 1 || rep.InFlight[0].Session != "s2" {
		t.Errorf("in flight %+v", rep.InFlight)
	}
	l.Close()

	clk.set(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC))
	l = open(t, path, o)
	defer l.Close()
	rep, err = l.Report()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.InFlight) != 0 || len(rep.Days) != 1 || rep.Days[0].Tokens != 100 || rep.Days[0].Calls != 3 {
		t.Errorf("the dead call is charged to its day on a later open: %+v", rep)
	}
	if err := call(t, l, "s5", "acme", 1, 0); err != nil {
		t.Errorf("a new day: %v", err)
	}
}

// A second process cannot open the file for writing while one holds it,
// nor read it then: it is told why.
func TestLocked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := open(t, path, ledger.Options{})
	defer l.Close()
	_, err := ledger.Open(path, ledger.Options{Timeout: 50 * time.Millisecond, ReadOnly: true})
	if !errors.Is(err, ledger.ErrLocked) {
		t.Errorf("open beside a writer: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	defer l.Close()
	for _, r := range []ledger.Request{
		{Charge: budget.Charge{Tokens: 1}},
		{Charge: budget.Charge{Session: "s", Tokens: -1}},
		{Charge: budget.Charge{Session: "s", CostUSD: -1}},
		{Charge: budget.Charge{Session: "s"}, Tenant: "../etc"},
		{Charge: budget.Charge{Session: "s"}, Caps: ledger.Caps{DayTokens: -5}},
	} {
		if _, err := l.Reserve(t.Context(), r); err == nil {
			t.Errorf("Reserve(%+v) accepted", r)
		}
	}
	if err := l.Settle(t.Context(), "nope", 1, 0); !errors.Is(err, ledger.ErrUnknownTicket) {
		t.Errorf("settle of an unknown ticket: %v", err)
	}
	ticket, err := l.Reserve(t.Context(), ledger.Request{Charge: budget.Charge{Session: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(t.Context(), ticket, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(t.Context(), ticket, 1, 0); !errors.Is(err, ledger.ErrUnknownTicket) {
		t.Errorf("a ticket settled twice: %v", err)
	}
}

// A request's caps only narrow the ledger's: a looser one changes nothing.
func TestNarrow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ base, req, want ledger.Caps }{
		{ledger.Caps{DayTokens: 100}, ledger.Caps{DayTokens: 1000}, ledger.Caps{DayTokens: 100}},
		{ledger.Caps{DayTokens: 100}, ledger.Caps{DayTokens: 10}, ledger.Caps{DayTokens: 10}},
		{ledger.Caps{}, ledger.Caps{TenantCostUSD: 2}, ledger.Caps{TenantCostUSD: 2}},
		{ledger.Caps{DayCostUSD: 5}, ledger.Caps{}, ledger.Caps{DayCostUSD: 5}},
	} {
		if got := tc.base.Narrow(tc.req); got != tc.want {
			t.Errorf("%+v.Narrow(%+v) = %+v, want %+v", tc.base, tc.req, got, tc.want)
		}
	}
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{Caps: ledger.Caps{DayTokens: 100}})
	defer l.Close()
	if _, err := l.Reserve(t.Context(), ledger.Request{Charge: budget.Charge{Session: "s", Tokens: 150}, Caps: ledger.Caps{DayTokens: 1 << 40}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve(t.Context(), ledger.Request{Charge: budget.Charge{Session: "t", Tokens: 1}, Caps: ledger.Caps{DayTokens: 1 << 40}}); !errors.Is(err, budget.ErrExceeded) {
		t.Errorf("a request's looser cap lifted the ledger's: %v", err)
	}
}

// One session racing its own calls: each new reservation charges the one
// before it as it stands, and that call's late settle still adds what it
// used beyond its reservation, so understating the estimate hides nothing.
func TestSameSessionRaceAndLateSettle(t *testing.T) {
	t.Parallel()
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{Caps: ledger.Caps{DayTokens: 1000}})
	defer l.Close()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ticket, err := l.Reserve(context.Background(), ledger.Request{Charge: budget.Charge{Session: "greedy", Tokens: 100}})
			if err != nil {
				return
			}
			admitted.Add(1)
			if err := l.Settle(context.Background(), ticket, 150, 0); err != nil {
				t.Errorf("settle: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	rep, err := l.Report()
	if err != nil {
		t.Fatal(err)
	}
	n := admitted.Load()
	if n > 10 || n == 0 {
		t.Errorf("%d calls admitted", n)
	}
	if len(rep.Days) != 1 || rep.Days[0].Tokens != 150*n || rep.Days[0].Calls != n || len(rep.InFlight) != 0 {
		t.Errorf("%d calls of 150 tokens admitted; report %+v", n, rep)
	}
	if _, err := l.Reserve(t.Context(), ledger.Request{Charge: budget.Charge{Session: "other"}}); !errors.Is(err, budget.ErrExceeded) {
		t.Errorf("after the race: %v", err)
	}
}

// CheckTenant accepts exactly the names of the regular expression it
// replaced.
func TestCheckTenantIsTheExpression(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	names := []string{"", "a", "default", "team-1.prod_x", ".a", "-a", "_a", "a b", "a/b", "é", "a\n",
		strings.Repeat("a", 64), strings.Repeat("a", 65), "Z" + strings.Repeat(".", 63), "9" + strings.Repeat("-", 64)}
	for c := range 256 {
		names = append(names, string(rune(c)), "a"+string([]byte{byte(c)}))
	}
	for _, n := range names {
		if got, want := ledger.CheckTenant(n) == nil, re.MatchString(n); got != want {
			t.Errorf("CheckTenant(%q) accepts: %v, the expression: %v", n, got, want)
		}
	}
}
