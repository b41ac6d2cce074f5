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

// pointer is a tool whose effect depends on its arguments, like a click
// whose effect is the element under the pointer: {"on":"pay"} is
// irreversible, {"on":"link"} reversible, {"on":"frame"} cannot be judged.
// It counts how often it was asked.
type pointer struct{ asked *int }

func (pointer) Spec() tool.Spec {
	return tool.Spec{Name: "click", Effect: tool.Reversible}
}
func (pointer) Run(context.Context, json.RawMessage) (string, error) { return "", nil }
func (p pointer) EffectOf(_ context.Context, args json.RawMessage) (tool.Effect, error) {
	*p.asked++
	var a struct{ On string }
	if err := json.Unmarshal(args, &a); err != nil {
		return 0, err
	}
	switch a.On {
	case "pay":
		return tool.Irreversible, nil
	case "frame":
		return 0, errors.New("cannot inspect")
	}
	return tool.Reversible, nil
}

func clickOn(p pointer, on string) *gate.Call {
	return &gate.Call{ID: "c", Name: "click", Args: json.RawMessage(`{"on":"` + on + `"}`), Tool: p}
}

// The confirm gate and the per-run limit class a call by its arguments
// (tool.Effector), fail closed when the tool cannot tell, and ask the tool
// once per call however many gates read the class.
func TestEffectOfCall(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		on         string
		wantAsk    bool
		wantEffect tool.Effect
	}{
		{"link", false, tool.Reversible},
		{"pay", true, tool.Irreversible},
		{"frame", true, tool.Irreversible}, // cannot be judged: the worst
	} {
		t.Run(c.on, func(t *testing.T) {
			t.Parallel()
			asked := 0
			p := pointer{&asked}
			call := clickOn(p, c.on)
			v := gate.Confirm{}.Check(t.Context(), call)
			if (v.Decision == gate.Ask) != c.wantAsk {
				t.Errorf("confirm %s (%s), want ask %v", v.Decision, v.Reason, c.wantAsk)
			}
			if got := call.Effect(t.Context()); got != c.wantEffect {
				t.Errorf("effect %s, want %s", got, c.wantEffect)
			}
			gate.NewLimit(nil).Check(t.Context(), call)
			if asked != 1 {
				t.Errorf("the tool was asked %d times for one call, want 1", asked)
			}
		})
	}
	if got := tool.EffectOf(t.Context(), mk(tool.ReadOnly), nil); got != tool.ReadOnly {
		t.Errorf("a tool without an Effector: %s, want its Spec's read-only", got)
	}
}

// An irreversible call over the per-run cap is refused by the limit gate,
// whoever would approve it; reversible calls of the same tool are not
// capped and do not use up the cap.
func TestLimitCountsIrreversibleCallsOfADynamicTool(t *testing.T) {
	t.Parallel()
	asked := 0
	p := pointer{&asked}
	lim := gate.NewLimit(nil)
	pl := gate.NewPipeline(approve.Fixed(true), gate.Confirm{}, lim)
	for i := range 3 {
		c := clickOn(p, "link")
		if v := pl.Decide(t.Context(), c); v.Decision != gate.Allow {
			t.Fatalf("link %d: %s %s", i, v.Decision, v.Reason)
		}
		pl.Ran(c)
	}
	first := clickOn(p, "pay")
	if v := pl.Decide(t.Context(), first); v.Decision != gate.Allow || v.Gate != gate.NameApproval {
		t.Fatalf("first payment: %+v", v)
	}
	pl.Ran(first)
	second := clickOn(p, "pay")
	if v := pl.Decide(t.Context(), second); v.Decision != gate.Deny || v.Gate != gate.NameLimit {
		t.Fatalf("second payment: %+v, want a deny by the limit", v)
	}
	if v := pl.Decide(t.Context(), clickOn(p, "link")); v.Decision != gate.Allow {
		t.Errorf("a link after the cap: %+v", v)
	}
}

// An Ask's Declined is what the model is told after a no; without it, the
// pipeline's general words.
func TestDeclinedHint(t *testing.T) {
	t.Parallel()
	ask := gate.Verdict{Decision: gate.Ask, Reason: "pay", Declined: "The task stops here."}
	for _, c := range []struct {
		name     string
		v        gate.Verdict
		approver approve.Approver
		want     string
	}{
		{"no", ask, approve.Fixed(false), "The task stops here."},
		{"approver error", ask, approve.Func(func(context.Context, approve.Request) (bool, error) {
			return true, errors.New("tty gone")
		}), "The task stops here."},
		{"no Declined", gate.Verdict{Decision: gate.Ask, Reason: "pay"}, approve.Fixed(false),
			"t needs a human's approval, and it was not given. Do not try it again; carry on without it and tell the user what was not done."},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v := gate.NewPipeline(c.approver, stub{name: "screen", v: c.v}).Decide(t.Context(), call(mk(tool.Reversible), `{}`))
			if v.Decision != gate.Deny || v.Gate != gate.NameApproval || v.ForModel() != c.want {
				t.Errorf("%+v, model told %q", v, v.ForModel())
			}
		})
	}
}
