package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

type orderArgs struct {
	ID string `json:"id"`
}

func orders(known ...string) tool.Tool {
	return tool.New(tool.Spec{Name: "order", Effect: tool.ReadOnly}, func(context.Context, orderArgs) (string, error) { return "ok", nil }).
		WithLookup(func(_ context.Context, a orderArgs) error {
			for _, k := range known {
				if a.ID == k {
					return nil
				}
			}
			if a.ID == "broken" {
				return errors.New("the store is down")
			}
			return fmt.Errorf("order %s %w", a.ID, tool.ErrNotExist)
		})
}

func TestExistence(t *testing.T) {
	t.Parallel()
	o := orders("A-1")
	for _, c := range []struct {
		args string
		want gate.Decision
		hint string
	}{
		{`{"id":"A-1"}`, gate.Allow, ""},
		{`{"id":"A-9"}`, gate.Deny, "order A-9 does not exist — verify it, do not retry the same value"},
		{`{"id":"broken"}`, gate.Deny, "could not be checked"},
	} {
		v := gate.Existence{}.Check(t.Context(), &gate.Call{Name: "order", Args: json.RawMessage(c.args), Tool: o})
		if v.Decision != c.want || !strings.Contains(v.ForModel(), c.hint) || v.Gate != gate.NameExistence {
			t.Errorf("%s: %+v", c.args, v)
		}
	}
	// A tool without a lookup passes.
	if v := (gate.Existence{}).Check(t.Context(), call(mk(tool.ReadOnly), `{}`)); v.Decision != gate.Allow {
		t.Errorf("%+v", v)
	}
}

func TestLimitCountsCallsThatRan(t *testing.T) {
	t.Parallel()
	irr := mk(tool.Irreversible)
	rev := mk(tool.Reversible)
	l := gate.NewLimit(map[string]int{"capped": 2})
	c := call(irr, `{}`)
	// Checked many times, never ran: still allowed (refusals do not count).
	for range 3 {
		if v := l.Check(t.Context(), c); v.Decision != gate.Allow {
			t.Fatalf("%+v", v)
		}
	}
	l.Ran(c)
	v := l.Check(t.Context(), c)
	if v.Decision != gate.Deny || v.Gate != gate.NameLimit || strings.Contains(v.Hint, "1") {
		t.Fatalf("after one irreversible call: %+v (the hint must not reveal the number)", v)
	}
	// Reversible tools are uncapped unless configured.
	r := call(rev, `{}`)
	for range 5 {
		l.Ran(r)
	}
	if v := l.Check(t.Context(), r); v.Decision != gate.Allow {
		t.Fatalf("%+v", v)
	}
	capped := &gate.Call{Name: "capped", Args: json.RawMessage(`{}`), Tool: rev}
	l.Ran(capped)
	if v := l.Check(t.Context(), capped); v.Decision != gate.Allow {
		t.Fatalf("%+v", v)
	}
	l.Ran(capped)
	if v := l.Check(t.Context(), capped); v.Decision != gate.Deny {
		t.Fatalf("after two: %+v", v)
	}
}

type confirming struct{ tool.Tool }

func (confirming) Confirm(_ context.Context, args json.RawMessage) string {
	if strings.Contains(string(args), "empty") {
		return "would empty the file"
	}
	return ""
}

func TestConfirmAsks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tool tool.Tool
		args string
		want gate.Decision
	}{
		{mk(tool.Irreversible), `{}`, gate.Ask},
		{mk(tool.Reversible), `{}`, gate.Allow},
		{confirming{mk(tool.Reversible)}, `{"path":"empty"}`, gate.Ask},
		{confirming{mk(tool.Reversible)}, `{"path":"full"}`, gate.Allow},
		{nil, `{}`, gate.Allow},
	} {
		if v := (gate.Confirm{}).Check(t.Context(), call(c.tool, c.args)); v.Decision != c.want {
			t.Errorf("%v %s: %+v", c.tool, c.args, v)
		}
	}
}

// Without asking (bypass mode), what a gate would ask about is refused and
// the approver is never consulted; denials and allows are unchanged.
func TestWithoutAsking(t *testing.T) {
	t.Parallel()
	asked := 0
	ap := approve.Func(func(context.Context, approve.Request) (bool, error) { asked++; return true, nil })
	ask := stub{name: "confirm", v: gate.Verdict{Decision: gate.Ask, Reason: "needs a yes"}}
	p := gate.NewPipeline(ap, ask).WithoutAsking()
	v := p.Decide(t.Context(), call(mk(tool.Reversible), `{}`))
	if v.Decision != gate.Deny || v.Gate != "confirm" || asked != 0 ||
		!strings.Contains(v.Reason, "run it yourself outside the agent if you mean it") || !strings.Contains(v.Hint, "outside the agent") {
		t.Fatalf("%+v asked=%d", v, asked)
	}
	p = gate.NewPipeline(ap, stub{name: "a", v: gate.Verdict{Decision: gate.Allow}}).WithoutAsking()
	if v := p.Decide(t.Context(), call(mk(tool.Reversible), `{}`)); v.Decision != gate.Allow {
		t.Fatalf("%+v", v)
	}
}

func TestCallStr(t *testing.T) {
	t.Parallel()
	c := &gate.Call{Args: json.RawMessage(`{"a":"x\u0041","n":1,"o":{"a":"y"}}`)}
	for _, k := range []struct {
		name string
		val  string
		ok   bool
	}{{"a", "xA", true}, {"n", "", false}, {"o", "", false}, {"zz", "", false}} {
		if v, ok := c.Str(k.name); v != k.val || ok != k.ok {
			t.Errorf("%s: %q %v", k.name, v, ok)
		}
	}
	bad := &gate.Call{Args: json.RawMessage(`[1]`)}
	if _, ok := bad.Str("a"); ok {
		t.Error("an array has no fields")
	}
}

// seen records the decoded value a lookup was given.
type seen struct{ got []*orderArgs }

func (s *seen) tool() *tool.Func[orderArgs] {
	return tool.New(tool.Spec{Name: "order", Effect: tool.ReadOnly,
		Schema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`)},
		func(context.Context, orderArgs) (string, error) { return "ok", nil }).
		WithLookup(func(_ context.Context, a orderArgs) error {
			s.got = append(s.got, &a)
			if a.ID == "A-1" {
				return nil
			}
			return fmt.Errorf("order %s %w", a.ID, tool.ErrNotExist)
		})
}

// TestExistenceReadsTheDecodedValue: the lookup judges the value the call
// decoded once, whether or not the validation gate ran before it, and
// arguments that do not decode are refused, not looked up in another form.
func TestExistenceReadsTheDecodedValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		args       string
		validation bool
		want       gate.Decision
		lookups    int
	}{
		{"after validation", `{"id":"A-1"}`, true, gate.Allow, 1},
		{"without validation", `{"id":"A-1"}`, false, gate.Allow, 1},
		{"escaped id", `{"id":"\u0041-1"}`, false, gate.Allow, 1},
		{"missing", `{"id":"A-9"}`, false, gate.Deny, 1},
		{"duplicate key, no validation", `{"id":"A-1","id":"A-9"}`, false, gate.Deny, 0},
		{"duplicate key", `{"id":"A-9","id":"A-1"}`, true, gate.Deny, 0},
		{"unknown field, no validation", `{"id":"A-1","x":1}`, false, gate.Deny, 0},
		{"not JSON, no validation", `{"id":`, false, gate.Deny, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var s seen
			cl := &gate.Call{Name: "order", Args: json.RawMessage(c.args), Tool: s.tool()}
			gates := []gate.Gate{gate.Existence{}}
			if c.validation {
				gates = []gate.Gate{gate.Validation{}, gate.Existence{}}
			}
			v := gate.NewPipeline(nil, gates...).Evaluate(t.Context(), cl)
			if v.Decision != c.want || len(s.got) != c.lookups {
				t.Fatalf("%+v after %d lookups, want %s after %d", v, len(s.got), c.want, c.lookups)
			}
			dec, err := cl.Decoded()
			if c.lookups > 0 && (err != nil || dec.(*orderArgs).ID != s.got[0].ID) {
				t.Fatalf("the lookup saw %+v, the call decoded %+v, %v", s.got[0], dec, err)
			}
		})
	}
}

// TestDecodedOnce: Decoded decodes on first use and returns the very same
// value after, for every gate and for the run.
func TestDecodedOnce(t *testing.T) {
	t.Parallel()
	var s seen
	cl := &gate.Call{Name: "order", Args: json.RawMessage(`{"id":"A-1"}`), Tool: s.tool()}
	a, err := cl.Decoded()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cl.Decoded()
	if a.(*orderArgs) != b.(*orderArgs) {
		t.Fatal("Decoded decoded twice")
	}
	if v := (gate.Validation{}).Check(t.Context(), cl); v.Decision != gate.Allow {
		t.Fatal(v)
	}
	if c, _ := cl.Decoded(); c.(*orderArgs) != a.(*orderArgs) {
		t.Fatal("the validation gate decoded again")
	}
}
