package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// fakeLedger admits a number of calls, then refuses as a day cap would; it
// can be told to fail instead. It keeps what it was told.
type fakeLedger struct {
	admit      int
	reserveErr error
	settleErr  error

	mu       sync.Mutex
	reserved []budget.Charge
	settled  []budget.Charge
	tickets  []string
}

func (f *fakeLedger) Reserve(_ context.Context, c budget.Charge) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reserveErr != nil {
		return "", f.reserveErr
	}
	if len(f.reserved) >= f.admit {
		return "", &budget.ExceededError{Limit: budget.Tokens, Used: "100", Max: "100", Scope: "day", Resets: time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)}
	}
	f.reserved = append(f.reserved, c)
	return fmt.Sprint("t", len(f.reserved)), nil
}

func (f *fakeLedger) Settle(_ context.Context, ticket string, c budget.Charge) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tickets = append(f.tickets, ticket)
	f.settled = append(f.settled, c)
	return f.settleErr
}

// countingModel counts the calls that reach the model.
type countingModel struct {
	model.Model
	mu    sync.Mutex
	calls int
}

func (c *countingModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.Model.Generate(ctx, req)
}

const ledgerScript = `{"turns":[
  {"text":"one","calls":[{"tool":"probe"}],"usage":{"input":10,"output":5}},
  {"text":"two","calls":[{"tool":"probe"}],"usage":{"input":20,"output":5}},
  {"text":"the end","usage":{"input":30,"output":5}}]}`

// The ledger is asked before each model call: a refusal stops the run with
// StopBudget before the model is called, recorded as the budget gate's
// verdict naming the cap; the calls it admitted were settled with what
// they used.
func TestLedgerStopsBeforeTheModelCall(t *testing.T) {
	t.Parallel()
	p := &probe{name: "probe"}
	m := &countingModel{Model: script(t, ledgerScript)}
	lg := &fakeLedger{admit: 1}
	log := &memLog{}
	res := fixture{model: m, tools: []tool.Tool{p}, log: log, ledger: lg, session: "sess-1"}.loop(t).Run(t.Context(), "task")
	if res.Stop != agent.StopBudget || m.calls != 1 || p.Runs() != 1 {
		t.Fatalf("stop %s, model calls %d, tool runs %d: want budget, 1, 1", res.Stop, m.calls, p.Runs())
	}
	var ex *budget.ExceededError
	if !errors.As(res.Err, &ex) || ex.Scope != "day" {
		t.Errorf("the stop's cause %v does not name the day cap", res.Err)
	}
	want := "session_start model_call verdict intent result verdict stop"
	if got := strings.Join(log.types(), " "); got != want {
		t.Fatalf("records\n %s\nwant\n %s", got, want)
	}
	if v := log.recs[5]; v.Gate != gate.NameBudget || !v.Decision.Is(gate.Deny) || !strings.Contains(v.Reason, "day tokens cap reached") || !strings.Contains(v.Reason, "2026-12-06T00:00:00Z") {
		t.Errorf("budget verdict %+v", v)
	}
	if len(lg.reserved) != 1 || lg.reserved[0].Session != "sess-1" || lg.reserved[0].Tokens <= 0 {
		t.Errorf("reserved %+v: want one call of sess-1 with its input counted", lg.reserved)
	}
	if len(lg.settled) != 1 || lg.settled[0].Tokens != 15 || lg.tickets[0] != "t1" {
		t.Errorf("settled %+v %v: want 15 tokens for ticket t1", lg.settled, lg.tickets)
	}
}

// Legitimate use: a ledger that admits every call changes nothing of the
// run, and every call is settled once.
func TestLedgerAdmitsEveryCall(t *testing.T) {
	t.Parallel()
	p := &probe{name: "probe"}
	lg := &fakeLedger{admit: 100}
	res := fixture{model: script(t, ledgerScript), tools: []tool.Tool{p}, ledger: lg}.loop(t).Run(t.Context(), "task")
	if res.Stop != agent.StopDone || res.Answer != "the end" || p.Runs() != 2 {
		t.Fatalf("stop %s %q, runs %d", res.Stop, res.Answer, p.Runs())
	}
	if len(lg.reserved) != 3 || len(lg.settled) != 3 || lg.settled[0].Tokens+lg.settled[1].Tokens+lg.settled[2].Tokens != res.Tokens {
		t.Errorf("reserved %d, settled %+v, run used %d tokens", len(lg.reserved), lg.settled, res.Tokens)
	}
}

// A ledger that cannot be asked, or that does not take a call's use,
// stops the run with an error: fail closed, no call made unjudged.
func TestLedgerFailsClosed(t *testing.T) {
	t.Parallel()
	down := errors.New("connection refused")
	for _, tc := range []struct {
		name       string
		lg         *fakeLedger
		modelCalls int
		toolRuns   int
	}{
		{"reserve fails", &fakeLedger{admit: 100, reserveErr: down}, 0, 0},
		{"settle fails", &fakeLedger{admit: 100, settleErr: down}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &probe{name: "probe"}
			m := &countingModel{Model: script(t, ledgerScript)}
			res := fixture{model: m, tools: []tool.Tool{p}, ledger: tc.lg}.loop(t).Run(t.Context(), "task")
			if res.Stop != agent.StopError || !errors.Is(res.Err, down) || !strings.Contains(res.Err.Error(), "fail closed") {
				t.Fatalf("stop %s: %v", res.Stop, res.Err)
			}
			if m.calls != tc.modelCalls || p.Runs() != tc.toolRuns {
				t.Errorf("model calls %d, tool runs %d: want %d, %d", m.calls, p.Runs(), tc.modelCalls, tc.toolRuns)
			}
		})
	}
}

// A model call that fails is settled as having used nothing.
func TestLedgerSettlesAFailedCall(t *testing.T) {
	t.Parallel()
	lg := &fakeLedger{admit: 100}
	res := fixture{model: failing{errors.New("503")}, ledger: lg}.loop(t).Run(t.Context(), "task")
	if res.Stop != agent.StopError || len(lg.settled) != 1 || lg.settled[0].Tokens != 0 {
		t.Fatalf("stop %s, settled %+v", res.Stop, lg.settled)
	}
}
