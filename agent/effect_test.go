package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// looker is a tool whose effect depends on its arguments (tool.Effector:
// {"on":"pay"} is irreversible) and whose result carries an image
// (tool.Imager), like a computer action.
type looker struct{ ran int }

var (
	_ tool.Effector = (*looker)(nil)
	_ tool.Imager   = (*looker)(nil)
)

func (*looker) Spec() tool.Spec {
	return tool.Spec{Name: "click", Schema: json.RawMessage(`{"type":"object"}`), Effect: tool.Reversible}
}
func (l *looker) Run(ctx context.Context, args json.RawMessage) (string, error) {
	out, _, err := l.RunImages(ctx, args)
	return out, err
}
func (l *looker) RunImages(context.Context, json.RawMessage) (string, []model.Image, error) {
	l.ran++
	return "the screen changed", []model.Image{{MediaType: "image/png", Data: []byte("shot")}}, nil
}
func (*looker) EffectOf(_ context.Context, args json.RawMessage) (tool.Effect, error) {
	var a struct{ On string }
	if err := json.Unmarshal(args, &a); err != nil {
		return 0, err
	}
	if a.On == "pay" {
		return tool.Irreversible, nil
	}
	return tool.Reversible, nil
}

// The loop classes a call by its arguments: the confirm gate asks for the
// irreversible one only, and the intent record and idempotency key carry
// the class the gates judged. The tool's image reaches the model beside
// its text, and Attach adds the first screenshot to the task.
func TestDynamicEffectAndImages(t *testing.T) {
	t.Parallel()
	lk := &looker{}
	rec := &approve.Recorder{Next: approve.Fixed(true)}
	log := &memLog{}
	m := script(t, `{"turns":[
		{"calls":[{"tool":"click","args":{"on":"link"}}]},
		{"calls":[{"tool":"click","args":{"on":"pay"}}]},
		{"text":"paid"}]}`)
	reg, err := tool.NewRegistry(lk)
	if err != nil {
		t.Fatal(err)
	}
	var firstReq *model.Request
	spy := modelFunc(func(ctx context.Context, req *model.Request) (*model.Response, error) {
		if firstReq == nil {
			firstReq = &model.Request{Messages: append([]model.Message(nil), req.Messages...)}
		}
		return m.Generate(ctx, req)
	})
	l, err := agent.New(agent.Config{Model: spy, Tools: reg, Audit: log, Session: "s",
		Gates: gate.NewPipeline(rec, gate.NewAvailability([]string{"click"}), gate.Validation{}, gate.Confirm{}),
		Attach: func(context.Context) ([]model.Block, error) {
			return []model.Block{model.ImageBlock(model.Image{MediaType: "image/png", Data: []byte("first")})}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	res := l.Run(t.Context(), "buy")
	if res.Stop != agent.StopDone || lk.ran != 2 {
		t.Fatalf("stop %s (%v), ran %d", res.Stop, res.Err, lk.ran)
	}
	if reqs := rec.Requests(); len(reqs) != 1 || string(reqs[0].Args) != `{"on":"pay"}` {
		t.Fatalf("asked about %+v, want the payment only", reqs)
	}
	var effects []string
	for _, r := range log.recs {
		if r.Type == audit.Intent {
			effects = append(effects, r.Effect.String())
			if r.Key == "" {
				t.Errorf("intent %+v has no idempotency key", r)
			}
		}
	}
	if len(effects) != 2 || effects[0] != "reversible" || effects[1] != "irreversible" {
		t.Errorf("intent effects %v", effects)
	}
	if firstReq == nil || len(firstReq.Messages[0].Blocks) != 2 || firstReq.Messages[0].Blocks[1].Kind != model.KindImage {
		t.Errorf("the first request's task message: %+v", firstReq)
	}
	last := lastResult(res.Messages)
	if last == nil || len(last.Images) != 1 || string(last.Images[0].Data) != "shot" || last.Content != "the screen changed" {
		t.Errorf("last result %+v", last)
	}
}

// An Attach that fails stops the run with an error before the model is asked.
func TestAttachFails(t *testing.T) {
	t.Parallel()
	asked := 0
	m := modelFunc(func(context.Context, *model.Request) (*model.Response, error) {
		asked++
		return &model.Response{Blocks: []model.Block{model.TextBlock("x")}}, nil
	})
	reg, _ := tool.NewRegistry()
	l, err := agent.New(agent.Config{Model: m, Tools: reg, Gates: gate.NewPipeline(nil),
		Attach: func(context.Context) ([]model.Block, error) { return nil, errors.New("no screen") }})
	if err != nil {
		t.Fatal(err)
	}
	if res := l.Run(t.Context(), "task"); res.Stop != agent.StopError || asked != 0 {
		t.Fatalf("stop %s, model asked %d times", res.Stop, asked)
	}
}
