package computer_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"testing"

	"github.com/reinhq/rein/computer"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

// pageEnv is a page whose element under the pointer the test changes, and
// whose first inspections can fail.
type pageEnv struct {
	pay   bool
	fails int // inspections that fail before one succeeds
}

func (e *pageEnv) Screenshot(context.Context) (computer.Screenshot, error) {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 200, 200))); err != nil {
		return computer.Screenshot{}, err
	}
	return computer.Screenshot{PNG: b.Bytes(), Width: 200, Height: 200}, nil
}

func (e *pageEnv) Inspect(context.Context, computer.Action) (computer.Element, error) {
	if e.fails > 0 {
		e.fails--
		return computer.Element{}, errors.New("frame busy")
	}
	if e.pay {
		return computer.Element{Found: true, Tag: "button", Texts: []string{"Pay now"}, Submits: true}, nil
	}
	return computer.Element{Found: true, Tag: "button", Texts: []string{"Next"}}, nil
}

func (e *pageEnv) Perform(context.Context, computer.Action) error { return nil }
func (e *pageEnv) Blocked() []computer.BlockedRequest             { return nil }

func clickCall(t *testing.T, s *computer.Screen, id string) *gate.Call {
	t.Helper()
	for _, tl := range s.Tools() {
		if tl.Spec().Name == string(computer.Click) {
			return &gate.Call{ID: id, Name: tl.Spec().Name, Args: computer.Action{Kind: computer.Click, X: 10, Y: 10}.Args(), Tool: tl}
		}
	}
	t.Fatal("no click tool")
	return nil
}

// A click judged once, then refused by a later gate (so no screenshot came
// after it), is judged again on the page as it is now: the button under
// the pointer turned into Pay now, and the second click asks and is
// irreversible, not waved through on the first call's inspection.
func TestEachCallSeesThePageNow(t *testing.T) {
	t.Parallel()
	e := &pageEnv{}
	s := computer.NewScreen(e, computer.Policy{}, nil)
	if _, err := s.Attach(t.Context()); err != nil {
		t.Fatal(err)
	}
	c1 := clickCall(t, s, "1")
	if v := s.Gate().Check(t.Context(), c1); v.Decision != gate.Allow || c1.Effect(t.Context()) != tool.Reversible {
		t.Fatalf("a click on Next: %+v, effect %v", v, c1.Effect(t.Context()))
	}
	e.pay = true
	c2 := clickCall(t, s, "2")
	if v := s.Gate().Check(t.Context(), c2); v.Decision != gate.Ask {
		t.Errorf("the same click on what is now Pay now: %+v, want ask", v)
	}
	if eff := c2.Effect(t.Context()); eff != tool.Irreversible {
		t.Errorf("its effect: %v, want irreversible", eff)
	}
}

// An element that cannot be inspected is judged irreversible by the screen
// gate, and the call's effect (what confirm, the per-run limit and the
// intent record read) is the same, although a later inspection would have
// succeeded.
func TestVerdictAndEffectAgree(t *testing.T) {
	t.Parallel()
	e := &pageEnv{}
	s := computer.NewScreen(e, computer.Policy{}, nil)
	if _, err := s.Attach(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.fails = 1
	c := clickCall(t, s, "1")
	if v := s.Gate().Check(t.Context(), c); v.Decision != gate.Ask {
		t.Fatalf("an element that could not be inspected: %+v, want ask", v)
	}
	if eff := c.Effect(t.Context()); eff != tool.Irreversible {
		t.Errorf("its effect: %v, want irreversible, as the gate judged it", eff)
	}
}
