// Package ledger keeps the budget that outlives a run: the tokens and cost
// of every model call of every session, per session, per day (UTC) and per
// tenant, in one bbolt file, with caps per day and per tenant. It is what
// `rein serve` consults before each model call of the sessions it hosts and
// of the CLI runs that point at it.
//
// A call is reserved before it is made (its expected use, at least one
// token, counts against the caps while it is in flight) and settled after
// (its real use replaces the reservation), so sessions racing many calls at
// once cannot get past a cap together: each admitted call holds its share
// before the next is judged. A reservation is written to the file like a
// charge: one that is never settled (its process died) still counts for
// its day, and is charged as it stands when the ledger is next opened on a
// later day.
//
// It is safe for concurrent use within one process; bbolt's file lock keeps
// a second process out (Open waits Options.Timeout for it). It does not
// price calls (the caller says what a call cost) and it does not stop a
// run by itself: agent.Ledger is how the loop asks it.
package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/reinhq/rein/budget"
)

// Caps are the caps a ledger enforces. A zero field is no cap.
type Caps struct {
	// DayTokens and DayCostUSD cap every session's use together in one
	// UTC day.
	DayTokens  int64   `json:"day_max_tokens,omitempty"`
	DayCostUSD float64 `json:"day_max_cost_usd,omitempty"`
	// TenantTokens and TenantCostUSD cap each tenant's use in one UTC day.
	TenantTokens  int64   `json:"tenant_max_tokens,omitempty"`
	TenantCostUSD float64 `json:"tenant_max_cost_usd,omitempty"`
}

// Validate rejects negative and non-finite caps, naming the field.
func (c Caps) Validate() error {
	switch {
	case c.DayTokens < 0:
		return errors.New("day_max_tokens must not be negative (0: no cap)")
	case c.TenantTokens < 0:
		return errors.New("tenant_max_tokens must not be negative (0: no cap)")
	case !(c.DayCostUSD >= 0) || math.IsInf(c.DayCostUSD, 0):
		return errors.New("day_max_cost_usd must be 0 (no cap) or a positive amount")
	case !(c.TenantCostUSD >= 0) || math.IsInf(c.TenantCostUSD, 0):
		return errors.New("tenant_max_cost_usd must be 0 (no cap) or a positive amount")
	}
	return nil
}

// Narrow returns the tighter of c and o, cap by cap: o can only lower c.
func (c Caps) Narrow(o Caps) Caps {
	c.DayTokens = tighter(c.DayTokens, o.DayTokens)
	c.DayCostUSD = tighter(c.DayCostUSD, o.DayCostUSD)
	c.TenantTokens = tighter(c.TenantTokens, o.TenantTokens)
	c.TenantCostUSD = tighter(c.TenantCostUSD, o.TenantCostUSD)
	return c
}

func tighter[T int64 | float64](a, b T) T {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}

// DefaultTenant is the tenant of a call that names none.
const DefaultTenant = "default"

// CheckTenant rejects a tenant name that is not 1 to 64 letters, digits,
// dots, dashes and underscores (starting with a letter or digit). It is
// written out rather than a regular expression: the expression's 63-fold
// repetition cost most of a millisecond to compile at every start of rein.
func CheckTenant(name string) error {
	ok := len(name) >= 1 && len(name) <= 64 && alnum(name[0])
	for i := 1; ok && i < len(name); i++ {
		c := name[i]
		ok = alnum(c) || c == '.' || c == '_' || c == '-'
	}
	if !ok {
		return fmt.Errorf("tenant %q: use 1 to 64 letters, digits, '.', '-' or '_', starting with a letter or digit", name)
	}
	return nil
}

// alnum reports whether c is an ASCII letter or digit.
func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// Options configure a ledger.
type Options struct {
	// Caps are the caps every reservation is judged against.
	Caps Caps
	// Now is the clock; nil is time.Now. The day is Now's UTC date.
	Now func() time.Time
	// Timeout is how long Open waits for another process's lock on the
	// file; 0 is one second.
	Timeout time.Duration
	// ReadOnly opens the file for Report only (rein cost), beside no
	// process that holds it for writing.
	ReadOnly bool
}

// Ledger is the ledger file, open.
type Ledger struct {
	db  *bolt.DB
	o   Options
	now func() time.Time
}

// Bucket names.
var (
	bDays     = []byte("days")     // "2006-01-02" → Totals
	bTenants  = []byte("tenants")  // "2006-01-02/tenant" → Totals
	bSessions = []byte("sessions") // session id → SessionTotals
	bReserved = []byte("reserved") // ticket → reservation
	// bCharged holds reservations charged as they stood before their call
	// was settled (the session's next reservation came first, or the
	// process died): a late settle adds what the call used beyond them.
	bCharged = []byte("charged") // ticket → reservation
	// bMeta holds the caps of the last writer, for a reader's report.
	bMeta = []byte("meta") // "caps" → Caps
)

// ErrUnknownTicket is a settle of a reservation the ledger does not hold:
// never made, settled already, or older than yesterday.
var ErrUnknownTicket = errors.New("ledger: no such reservation (never made, or settled already)")

// ErrLocked is a ledger file another process holds (a running rein serve).
var ErrLocked = errors.New("ledger: the file is held by another process (a running rein serve?)")

// Open opens (or creates) the ledger at path. A reservation left by a
// process that died on an earlier day is charged as it stood.
func Open(path string, o Options) (*Ledger, error) {
	if err := o.Caps.Validate(); err != nil {
		return nil, fmt.Errorf("ledger: caps: %w", err)
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	if o.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: o.Timeout, ReadOnly: o.ReadOnly})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	l := &Ledger{db: db, o: o, now: now}
	if !o.ReadOnly {
		if err := db.Update(l.init); err != nil {
			db.Close()
			return nil, fmt.Errorf("ledger %s: %w", path, err)
		}
	}
	return l, nil
}

// init makes the buckets and charges the reservations of earlier days.
func (l *Ledger) init(tx *bolt.Tx) error {
	for _, b := range [][]byte{bDays, bTenants, bSessions, bReserved, bCharged, bMeta} {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	if err := put(tx.Bucket(bMeta), "caps", l.o.Caps); err != nil {
		return err
	}
	today := day(l.now())
	var stale [][]byte
	var rs []reservation
	err := tx.Bucket(bReserved).ForEach(func(k, v []byte) error {
		var r reservation
		if json.Unmarshal(v, &r) != nil || r.Day < today {
			stale = append(stale, slices.Clone(k))
			rs = append(rs, r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range stale {
		if err := chargeAsItStands(tx, k, rs[i]); err != nil {
			return err
		}
	}
	// Late settles are taken for a day after a reservation's own.
	var old [][]byte
	err = tx.Bucket(bCharged).ForEach(func(k, v []byte) error {
		var r reservation
		if json.Unmarshal(v, &r) != nil || r.Day < day(l.now().AddDate(0, 0, -1)) {
			old = append(old, slices.Clone(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range old {
		if err := tx.Bucket(bCharged).Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// chargeAsItStands charges reservation r (ticket k) as it was reserved,
// and keeps it for a late settle.
func chargeAsItStands(tx *bolt.Tx, k []byte, r reservation) error {
	if err := tx.Bucket(bReserved).Delete(k); err != nil {
		return err
	}
	if r.Session == "" {
		return nil
	}
	if err := charge(tx, r, r.Tokens, r.CostUSD, true); err != nil {
		return err
	}
	return put(tx.Bucket(bCharged), string(k), r)
}

// Close closes the file.
func (l *Ledger) Close() error { return l.db.Close() }

// Path is the ledger file's path.
func (l *Ledger) Path() string { return l.db.Path() }

// Totals are what was used: model calls, tokens, cost.
type Totals struct {
	Calls   int64   `json:"calls"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

func (t Totals) add(tokens int64, cost float64) Totals {
	return Totals{Calls: t.Calls + 1, Tokens: t.Tokens + tokens, CostUSD: t.CostUSD + cost}
}

// reservation is a call in flight.
type reservation struct {
	Session string    `json:"session"`
	Tenant  string    `json:"tenant"`
	Day     string    `json:"day"`
	Tokens  int64     `json:"tokens"`
	CostUSD float64   `json:"cost_usd"`
	At      time.Time `json:"at"`
}

// Request is a reservation asked for: a session's call, its tenant, what
// it is expected to use, and caps that can only narrow the ledger's.
type Request struct {
	budget.Charge
	Tenant string
	Caps   Caps
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// resets is the end of t's UTC day.
func resets(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

// Reserve admits a model call, or refuses it with a *budget.ExceededError
// naming the cap (day or tenant), its amount and when it resets. A call is
// admitted while what the day (or the tenant's day) has used and holds in
// reservations is under each cap; it then holds its own expected use, at
// least one token and at least the largest cost a
// call of the session has settled at. A session holds one reservation at a
// time, as its loop makes one call at a time: a second one charges the
// first as it stands (its late settle adds what it used beyond). The
// returned ticket settles it.
func (l *Ledger) Reserve(ctx context.Context, r Request) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if r.Session == "" {
		return "", errors.New("ledger: a reservation needs its session's id")
	}
	if r.Tenant == "" {
		r.Tenant = DefaultTenant
	}
	if err := CheckTenant(r.Tenant); err != nil {
		return "", fmt.Errorf("ledger: %w", err)
	}
	if r.Tokens < 0 || !(r.CostUSD >= 0) || math.IsInf(r.CostUSD, 0) {
		return "", errors.New("ledger: a reservation's tokens and cost must not be negative")
	}
	if err := r.Caps.Validate(); err != nil {
		return "", fmt.Errorf("ledger: caps: %w", err)
	}
	caps := l.o.Caps.Narrow(r.Caps)
	now := l.now()
	res := reservation{Session: r.Session, Tenant: r.Tenant, Day: day(now), Tokens: max(r.Tokens, 1), CostUSD: r.CostUSD, At: now.UTC()}
	var b [16]byte
	_, _ = rand.Read(b[:])
	ticket := hex.EncodeToString(b[:])
	err := l.db.Update(func(tx *bolt.Tx) error {
		var st SessionTotals
		if v := tx.Bucket(bSessions).Get([]byte(r.Session)); v != nil {
			_ = json.Unmarshal(v, &st)
		}
		res.CostUSD = max(res.CostUSD, st.MaxCallUSD)
		dayUsed, tenantUsed := get(tx.Bucket(bDays), res.Day), get(tx.Bucket(bTenants), res.Day+"/"+res.Tenant)
		var held [][]byte
		var heldRes []reservation
		err := tx.Bucket(bReserved).ForEach(func(k, v []byte) error {
			var o reservation
			if json.Unmarshal(v, &o) != nil || o.Day != res.Day {
				return nil
			}
			if o.Session == res.Session {
				held = append(held, slices.Clone(k))
				heldRes = append(heldRes, o)
			}
			dayUsed.Tokens += o.Tokens
			dayUsed.CostUSD += o.CostUSD
			if o.Tenant == res.Tenant {
				tenantUsed.Tokens += o.Tokens
				tenantUsed.CostUSD += o.CostUSD
			}
			return nil
		})
		if err != nil {
			return err
		}
		if ex := over(caps, dayUsed, tenantUsed, res.Tenant, now); ex != nil {
			return ex
		}
		for i, k := range held { // a call of this session not settled yet: it counts as it stands
			if err := chargeAsItStands(tx, k, heldRes[i]); err != nil {
				return err
			}
		}
		v, err := json.Marshal(res)
		if err != nil {
			return err
		}
		return tx.Bucket(bReserved).Put([]byte(ticket), v)
	})
	if err != nil {
		var ex *budget.ExceededError
		if errors.As(err, &ex) {
			return "", err
		}
		return "", fmt.Errorf("ledger: reserve: %w", err)
	}
	return ticket, nil
}

// over returns the first cap that day and tenant (use plus reservations)
// have reached, or nil.
func over(c Caps, day, tenant Totals, name string, now time.Time) *budget.ExceededError {
	ex := func(scope string, l budget.Limit, used, capv string) *budget.ExceededError {
		return &budget.ExceededError{Limit: l, Used: used, Max: capv, Scope: scope, Resets: resets(now)}
	}
	switch {
	case c.DayTokens > 0 && day.Tokens >= c.DayTokens:
		return ex("day", budget.Tokens, fmt.Sprint(day.Tokens), fmt.Sprint(c.DayTokens))
	case c.DayCostUSD > 0 && day.CostUSD >= c.DayCostUSD:
		return ex("day", budget.Cost, fmt.Sprintf("$%.4f", day.CostUSD), fmt.Sprintf("$%.4f", c.DayCostUSD))
	case c.TenantTokens > 0 && tenant.Tokens >= c.TenantTokens:
		return ex("tenant "+name, budget.Tokens, fmt.Sprint(tenant.Tokens), fmt.Sprint(c.TenantTokens))
	case c.TenantCostUSD > 0 && tenant.CostUSD >= c.TenantCostUSD:
		return ex("tenant "+name, budget.Cost, fmt.Sprintf("$%.4f", tenant.CostUSD), fmt.Sprintf("$%.4f", c.TenantCostUSD))
	}
	return nil
}

// Settle replaces the reservation ticket with what the call used, on the
// day it was reserved.
func (l *Ledger) Settle(ctx context.Context, ticket string, tokens int64, costUSD float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if tokens < 0 || !(costUSD >= 0) || math.IsInf(costUSD, 0) {
		return errors.New("ledger: a call's tokens and cost must not be negative")
	}
	err := l.db.Update(func(tx *bolt.Tx) error {
		b, late := tx.Bucket(bReserved), false
		v := b.Get([]byte(ticket))
		if v == nil {
			b, late = tx.Bucket(bCharged), true
			if v = b.Get([]byte(ticket)); v == nil {
				return ErrUnknownTicket
			}
		}
		var r reservation
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("reservation %s: %w", ticket, err)
		}
		if err := b.Delete([]byte(ticket)); err != nil {
			return err
		}
		if late { // charged as it stood: add what the call used beyond that
			return charge(tx, r, max(tokens-r.Tokens, 0), max(costUSD-r.CostUSD, 0), false)
		}
		return charge(tx, r, tokens, costUSD, true)
	})
	if err != nil && !errors.Is(err, ErrUnknownTicket) {
		return fmt.Errorf("ledger: settle: %w", err)
	}
	return err
}

// charge adds one call's use to its day, its tenant's day and its
// session; call says whether to count it as a call (not for a late
// settle's difference).
func charge(tx *bolt.Tx, r reservation, tokens int64, cost float64, call bool) error {
	add := func(t Totals) Totals {
		t = t.add(tokens, cost)
		if !call {
			t.Calls--
		}
		return t
	}
	for _, kv := range []struct {
		b   []byte
		key string
	}{{bDays, r.Day}, {bTenants, r.Day + "/" + r.Tenant}} {
		t := add(get(tx.Bucket(kv.b), kv.key))
		if err := put(tx.Bucket(kv.b), kv.key, t); err != nil {
			return err
		}
	}
	b := tx.Bucket(bSessions)
	var st SessionTotals
	if v := b.Get([]byte(r.Session)); v != nil {
		_ = json.Unmarshal(v, &st)
	}
	if st.Session == "" {
		st.Session, st.Tenant, st.First = r.Session, r.Tenant, r.Day
	}
	st.Last = r.Day
	st.Totals = add(st.Totals)
	if call {
		st.MaxCallUSD = max(st.MaxCallUSD, cost)
	}
	return put(b, r.Session, st)
}

func get(b *bolt.Bucket, key string) Totals {
	var t Totals
	if v := b.Get([]byte(key)); v != nil {
		_ = json.Unmarshal(v, &t)
	}
	return t
}

func put(b *bolt.Bucket, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put([]byte(key), data)
}

// SessionTotals is one session's line of the ledger.
type SessionTotals struct {
	Session string `json:"session"`
	Tenant  string `json:"tenant"`
	// First and Last are the UTC days of its first and last call.
	First string `json:"first_day"`
	Last  string `json:"last_day"`
	Totals
	// MaxCallUSD is the most one of its calls cost: the least its next
	// reservation holds when a cost cap is set.
	MaxCallUSD float64 `json:"max_call_usd"`
}

// DayTotals is one day's line.
type DayTotals struct {
	Day string `json:"day"`
	Totals
}

// TenantTotals is one tenant's line for one day.
type TenantTotals struct {
	Day    string `json:"day"`
	Tenant string `json:"tenant"`
	Totals
}

// Report is the whole ledger: days, tenants' days and sessions, oldest
// first, the calls in flight, and the caps in force (for a ledger opened
// ReadOnly, those its last writer had).
type Report struct {
	Days     []DayTotals     `json:"days"`
	Tenants  []TenantTotals  `json:"tenants"`
	Sessions []SessionTotals `json:"sessions"`
	// InFlight are the reservations not yet settled, as they count.
	InFlight []InFlight `json:"in_flight"`
	Caps     Caps       `json:"caps"`
}

// InFlight is a reservation not yet settled.
type InFlight struct {
	Session string    `json:"session"`
	Tenant  string    `json:"tenant"`
	Day     string    `json:"day"`
	Tokens  int64     `json:"tokens"`
	CostUSD float64   `json:"cost_usd"`
	At      time.Time `json:"at"`
}

// Report reads the ledger.
func (l *Ledger) Report() (Report, error) {
	rep := Report{Days: []DayTotals{}, Tenants: []TenantTotals{}, Sessions: []SessionTotals{}, InFlight: []InFlight{}, Caps: l.o.Caps}
	err := l.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bDays) == nil { // a file no writer has opened yet
			return nil
		}
		if l.o.ReadOnly { // the caps the server that wrote it last had
			if b := tx.Bucket(bMeta); b != nil {
				if v := b.Get([]byte("caps")); v != nil {
					_ = json.Unmarshal(v, &rep.Caps)
				}
			}
		}
		if err := tx.Bucket(bDays).ForEach(func(k, v []byte) error {
			d := DayTotals{Day: string(k)}
			_ = json.Unmarshal(v, &d.Totals)
			rep.Days = append(rep.Days, d)
			return nil
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bTenants).ForEach(func(k, v []byte) error {
			d, name, _ := strings.Cut(string(k), "/")
			t := TenantTotals{Day: d, Tenant: name}
			_ = json.Unmarshal(v, &t.Totals)
			rep.Tenants = append(rep.Tenants, t)
			return nil
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bSessions).ForEach(func(_, v []byte) error {
			var s SessionTotals
			if json.Unmarshal(v, &s) == nil {
				rep.Sessions = append(rep.Sessions, s)
			}
			return nil
		}); err != nil {
			return err
		}
		return tx.Bucket(bReserved).ForEach(func(_, v []byte) error {
			var r reservation
			if json.Unmarshal(v, &r) == nil {
				rep.InFlight = append(rep.InFlight, InFlight(r))
			}
			return nil
		})
	})
	slices.SortStableFunc(rep.Sessions, func(a, b SessionTotals) int {
		return strings.Compare(a.First+a.Session, b.First+b.Session)
	})
	return rep, err
}

// Account is a ledger as one kind of session sees it: its tenant and the
// caps its own configuration narrows the ledger's to. It is an
// agent.Ledger. An Account without a Ledger refuses every call (fail
// closed); a builder may return one holding only the session's Caps for
// the host to bind.
type Account struct {
	Ledger *Ledger
	Tenant string
	Caps   Caps
}

// Reserve reserves c for the account's tenant.
func (a *Account) Reserve(ctx context.Context, c budget.Charge) (string, error) {
	if a.Ledger == nil {
		return "", errors.New("ledger: this session's account is bound to no ledger")
	}
	return a.Ledger.Reserve(ctx, Request{Charge: c, Tenant: a.Tenant, Caps: a.Caps})
}

// Settle settles ticket with what c used.
func (a *Account) Settle(ctx context.Context, ticket string, c budget.Charge) error {
	if a.Ledger == nil {
		return errors.New("ledger: this session's account is bound to no ledger")
	}
	return a.Ledger.Settle(ctx, ticket, c.Tokens, c.CostUSD)
}
