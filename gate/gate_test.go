package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

type stub struct {
	name string
	v    gate.Verdict
	hits *int
}

func (s stub) Name() string { return s.name }
func (s stub) Check(context.Context, *gate.Call) gate.Verdict {
	if s.hits != nil {
		*s.hits++
	}
	return s.v
}

type boom struct{}

func (boom) Name() string                                   { return "boom" }
func (boom) Check(context.Context, *gate.Call) gate.Verdict { panic("broken gate") }

func mk(effect tool.Effect) tool.Tool {
	type args struct {
		Path string `json:"path"`
	}
	return tool.New(tool.Spec{Name: "t", Effect: effect}, func(context.Context, args) (string, error) { return "", nil })
}

func call(t tool.Tool, args string) *gate.Call {
	c := &gate.Call{ID: "c1", Name: "t", Args: json.RawMessage(args), Tool: t}
	if t == nil {
		c.Name = "ghost"
	}
	return c
}

func TestPipelineOrder(t *testing.T) {
	t.Parallel()
	allow := gate.Verdict{Decision: gate.Allow}
	ask := gate.Verdict{Decision: gate.Ask, Reason: "asks"}
	deny := gate.Verdict{Decision: gate.Deny, Reason: "no"}
	for _, c := range []struct {
		name      string
		verdicts  []gate.Verdict
		want      gate.Decision
		wantGate  string
		wantAfter int // gates consulted after the first
	}{
		{"all allow", []gate.Verdict{allow, allow, allow}, gate.Allow, gate.NamePipeline, 2},
		{"deny is final", []gate.Verdict{deny, allow, allow}, gate.Deny, "g0", 0},
		{"deny after ask wins", []gate.Verdict{ask, deny, allow}, gate.Deny, "g1", 1},
		{"ask needs every gate", []gate.Verdict{ask, allow, allow}, gate.Ask, "g0", 2},
		{"first ask reported", []gate.Verdict{allow, ask, ask}, gate.Ask, "g1", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			hits := make([]int, len(c.verdicts))
			gates := make([]gate.Gate, len(c.verdicts))
			for i, v := range c.verdicts {
				gates[i] = stub{name: "g" + string(rune('0'+i)), v: v, hits: &hits[i]}
			}
			v := gate.NewPipeline(nil, gates...).Evaluate(t.Context(), call(mk(tool.ReadOnly), `{}`))
			if v.Decision != c.want || v.Gate != c.wantGate {
				t.Fatalf("got %s by %s, want %s by %s", v.Decision, v.Gate, c.want, c.wantGate)
			}
			after := 0
			for _, h := range hits[1:] {
				after += h
			}
			if after != c.wantAfter {
				t.Errorf("%d later gates consulted, want %d", after, c.wantAfter)
			}
		})
	}
}

// A broken gate refuses; it never lets a call through.
func TestFailClosed(t *testing.T) {
	t.Parallel()
	p := gate.NewPipeline(approve.Fixed(true), boom{})
	if v := p.Decide(t.Context(), call(mk(tool.ReadOnly), `{}`)); v.Decision != gate.Deny || v.Gate != "boom" {
		t.Fatalf("panicking gate gave %+v", v)
	}
	weird := stub{name: "weird", v: gate.Verdict{Decision: gate.Decision(9)}}
	if v := gate.NewPipeline(nil, weird).Evaluate(t.Context(), call(mk(tool.ReadOnly), `{}`)); v.Decision != gate.Deny {
		t.Fatalf("unknown decision gave %+v", v)
	}
	var zero gate.Verdict
	if zero.Decision != gate.Deny {
		t.Fatal("the zero verdict must deny")
	}
}

func TestDecideAsksTheApprover(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name     string
		approver approve.Approver
		ctx      context.Context
		want     gate.Decision
	}{
		{"yes", approve.Fixed(true), context.Background(), gate.Allow},
		{"no", approve.Fixed(false), context.Background(), gate.Deny},
		{"nil approver is no", nil, context.Background(), gate.Deny},
		{"error is no", approve.Func(func(context.Context, approve.Request) (bool, error) { return true, errors.New("gone") }), context.Background(), gate.Deny},
		{"cancelled is no", approve.Fixed(true), cancelled, gate.Deny},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := &approve.Recorder{Next: c.approver}
			var a approve.Approver = rec
			if c.approver == nil {
				a = nil
			}
			p := gate.NewPipeline(a, gate.NewAvailability([]string{"t"}), gate.Validation{}, gate.Confirm{})
			v := p.Decide(c.ctx, call(mk(tool.Irreversible), `{"path":"x"}`))
			if v.Decision != c.want || v.Gate != gate.NameApproval || v.Reason == "" {
				t.Fatalf("got %+v, want %s by approval with a reason", v, c.want)
			}
			if c.want == gate.Deny && v.ForModel() == v.Reason {
				t.Errorf("a refusal must carry a hint for the model")
			}
			if a != nil {
				reqs := rec.Requests()
				if len(reqs) != 1 || reqs[0].Tool != "t" || string(reqs[0].Args) != `{"path":"x"}` || reqs[0].Gate != gate.NameConfirm {
					t.Errorf("approver saw %+v, want the whole call", reqs)
				}
			}
		})
	}
}

// Ask from the pipeline is not asked when another gate denies: no human is
// bothered with a call that cannot run anyway.
func TestDenyBeforeApproval(t *testing.T) {
	t.Parallel()
	rec := &approve.Recorder{Next: approve.Fixed(true)}
	p := gate.NewPipeline(rec, gate.NewAvailability([]string{"t"}), gate.Validation{}, gate.Confirm{})
	v := p.Decide(t.Context(), call(mk(tool.Irreversible), `{"path":1}`))
	if v.Decision != gate.Deny || v.Gate != gate.NameValidation || len(rec.Requests()) != 0 {
		t.Fatalf("got %+v after %d approvals", v, len(rec.Requests()))
	}
}

func TestAvailability(t *testing.T) {
	t.Parallel()
	a := gate.NewAvailability([]string{"t"})
	if !a.Offers("t") || a.Offers("other") {
		t.Fatal("Offers must follow the allowlist")
	}
	for _, c := range []struct {
		name string
		call *gate.Call
		want gate.Decision
	}{
		{"allowed", call(mk(tool.ReadOnly), `{}`), gate.Allow},
		{"unknown tool", call(nil, `{}`), gate.Deny},
		{"not allowed", &gate.Call{Name: "u", Tool: tool.New(tool.Spec{Name: "u"}, func(context.Context, struct{}) (string, error) { return "", nil })}, gate.Deny},
	} {
		v := a.Check(t.Context(), c.call)
		if v.Decision != c.want {
			t.Errorf("%s: %+v", c.name, v)
		}
		if v.Decision == gate.Deny && (v.Hint == "" || v.Gate != gate.NameAvailability) {
			t.Errorf("%s: refusal without hint or gate: %+v", c.name, v)
		}
	}
	p := gate.NewPipeline(nil, a)
	if !p.Offers("t") || p.Offers("other") {
		t.Fatal("the pipeline must offer only what its gates offer")
	}
}

func TestValidation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args string
		want gate.Decision
	}{
		{`{"path":"a"}`, gate.Allow},
		{`{}`, gate.Allow},
		{` {"path":"a"} `, gate.Allow},
		{`{"path":`, gate.Deny},
		{`[1]`, gate.Deny},
		{`"x"`, gate.Deny},
		{`null`, gate.Deny},
		{`{"path":1}`, gate.Deny},
		{`{"path":"a","extra":true}`, gate.Deny},
		{`{"path":"a"} {"path":"b"}`, gate.Deny},
	} {
		v := gate.Validation{}.Check(t.Context(), call(mk(tool.ReadOnly), c.args))
		if v.Decision != c.want {
			t.Errorf("%s: %+v, want %s", c.args, v, c.want)
		}
	}
	// A tool without a validator is still held to a JSON object.
	bare := &gate.Call{Name: "x", Args: json.RawMessage(`[`), Tool: bareTool{}}
	if v := (gate.Validation{}).Check(t.Context(), bare); v.Decision != gate.Deny {
		t.Errorf("bare tool with malformed args: %+v", v)
	}
}

type bareTool struct{}

func (bareTool) Spec() tool.Spec                                      { return tool.Spec{Name: "x"} }
func (bareTool) Run(context.Context, json.RawMessage) (string, error) { return "", nil }

func TestConfirm(t *testing.T) {
	t.Parallel()
	for e, want := range map[tool.Effect]gate.Decision{tool.ReadOnly: gate.Allow, tool.Reversible: gate.Allow, tool.Irreversible: gate.Ask} {
		if v := (gate.Confirm{}).Check(t.Context(), call(mk(e), `{}`)); v.Decision != want {
			t.Errorf("%s: %+v, want %s", e, v, want)
		}
	}
}

func TestDecisionText(t *testing.T) {
	t.Parallel()
	for _, d := range []gate.Decision{gate.Allow, gate.Ask, gate.Deny} {
		b, _ := d.MarshalText()
		var back gate.Decision
		if err := back.UnmarshalText(b); err != nil || back != d {
			t.Errorf("%s round-trips to %s (%v)", d, back, err)
		}
	}
	var d gate.Decision
	if err := d.UnmarshalText([]byte("maybe")); err == nil {
		t.Error("accepted maybe")
	}
}
