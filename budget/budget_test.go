package budget_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/model"
)

func TestMeter(t *testing.T) {
	t.Parallel()
	m := budget.NewMeter(budget.Limits{MaxSteps: 2, MaxToolCalls: 3, MaxTokens: 100, MaxCostUSD: 0.5})
	for i := range 2 {
		if err := m.BeginStep(); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
	err := m.BeginStep()
	var ex *budget.ExceededError
	if !errors.As(err, &ex) || ex.Limit != budget.Steps || !errors.Is(err, budget.ErrExceeded) {
		t.Fatalf("third step: %v", err)
	}
	if m.Used().Steps != 2 {
		t.Fatalf("a refused step was counted: %+v", m.Used())
	}
	for i := range 3 {
		if err := m.TakeCall(); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if err := m.TakeCall(); !errors.As(err, &ex) || ex.Limit != budget.ToolCalls {
		t.Fatalf("fourth call: %v", err)
	}
	if err := m.Charge(model.Usage{Input: 60, Output: 40}, 0.1); err != nil {
		t.Fatalf("exactly at the cap is allowed: %v", err)
	}
	if err := m.Charge(model.Usage{Output: 1}, 0); !errors.As(err, &ex) || ex.Limit != budget.Tokens {
		t.Fatalf("over the token cap: %v", err)
	}
	m2 := budget.NewMeter(budget.Limits{MaxCostUSD: 0.5})
	if err := m2.Charge(model.Usage{}, 0.6); !errors.As(err, &ex) || ex.Limit != budget.Cost {
		t.Fatalf("over the cost cap: %v", err)
	}
	u := m.Used()
	if u.Tokens != 101 || u.ToolCalls != 3 || u.CostUSD != 0.1 {
		t.Fatalf("used %+v", u)
	}
}

func TestZeroMeansNoCap(t *testing.T) {
	t.Parallel()
	m := budget.NewMeter(budget.Limits{})
	for range 1000 {
		if m.BeginStep() != nil || m.TakeCall() != nil || m.Charge(model.Usage{Input: 1 << 20}, 1) != nil {
			t.Fatal("a zero limit capped something")
		}
	}
}

func TestCacheTokensCount(t *testing.T) {
	t.Parallel()
	m := budget.NewMeter(budget.Limits{MaxTokens: 10})
	if err := m.Charge(model.Usage{Input: 5, CacheRead: 6}, 0); err == nil {
		t.Fatal("cache reads are billed tokens and must count")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := budget.Defaults().Validate(); err != nil {
		t.Fatal(err)
	}
	d := budget.Defaults()
	if d.MaxSteps != 40 || d.MaxToolCalls != 200 || d.MaxTokens != 200_000 || d.MaxWall != 30*time.Minute {
		t.Fatalf("defaults %+v", d)
	}
	for _, l := range []budget.Limits{{MaxSteps: -1}, {MaxToolCalls: -1}, {MaxTokens: -1}, {MaxCostUSD: -0.1}, {MaxWall: -time.Second}} {
		if err := l.Validate(); err == nil {
			t.Errorf("%+v accepted", l)
		}
	}
}

func TestLimitsJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(budget.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"max_wall":"30m0s"`) || !strings.Contains(string(b), `"max_steps":40`) {
		t.Fatalf("%s", b)
	}
}

// What MarshalJSON writes reads back equal (agent.Checkpoint and the audit
// log hold limits); the older nanosecond form reads too; a misspelt or
// mistyped cap is an error, never no cap.
func TestLimitsJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for _, l := range []budget.Limits{budget.Defaults(), {}, {MaxCostUSD: 1.25, MaxWall: 1500 * time.Millisecond}} {
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		var got budget.Limits
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if got != l {
			t.Errorf("%s read back as %+v, want %+v", b, got, l)
		}
	}
	var ns budget.Limits
	if err := json.Unmarshal([]byte(`{"max_steps":3,"max_wall":90000000000}`), &ns); err != nil || ns.MaxWall != 90*time.Second || ns.MaxSteps != 3 {
		t.Errorf("nanoseconds: %+v, %v", ns, err)
	}
	for _, bad := range []string{`{"max_stepz":3}`, `{"max_wall":"soon"}`, `{"max_wall":true}`, `{"max_steps":"3"}`} {
		var l budget.Limits
		if err := json.Unmarshal([]byte(bad), &l); err == nil {
			t.Errorf("%s accepted as %+v", bad, l)
		}
	}
}

// A conversation's turn gets the step and tool-call caps afresh, while the
// token and cost caps count the whole conversation; the totals go on.
func TestBeginTurn(t *testing.T) {
	t.Parallel()
	m := budget.NewMeter(budget.Limits{MaxSteps: 2, MaxToolCalls: 1, MaxTokens: 100})
	var ex *budget.ExceededError
	for turn := range 3 {
		if turn > 0 {
			m.BeginTurn()
		}
		for i := range 2 {
			if err := m.BeginStep(); err != nil {
				t.Fatalf("turn %d step %d: %v", turn, i+1, err)
			}
		}
		if err := m.BeginStep(); !errors.As(err, &ex) || ex.Limit != budget.Steps || ex.Used != "2" {
			t.Fatalf("turn %d third step: %v", turn, err)
		}
		if err := m.TakeCall(); err != nil {
			t.Fatalf("turn %d call: %v", turn, err)
		}
		if err := m.TakeCall(); !errors.As(err, &ex) || ex.Limit != budget.ToolCalls {
			t.Fatalf("turn %d second call: %v", turn, err)
		}
		if s, c := m.Turn(); s != 2 || c != 1 {
			t.Fatalf("turn %d counted %d steps %d calls", turn, s, c)
		}
		if err := m.Charge(model.Usage{Input: 40}, 0); turn < 2 && err != nil {
			t.Fatalf("turn %d charge: %v", turn, err)
		} else if turn == 2 && !errors.As(err, &ex) {
			t.Fatalf("the token cap is the conversation's: 120 of 100 passed (%v)", err)
		}
	}
	if u := m.Used(); u.Steps != 6 || u.ToolCalls != 3 || u.Tokens != 120 {
		t.Fatalf("totals %+v", u)
	}
}
