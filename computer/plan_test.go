package computer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/computer"
	"github.com/reinhq/rein/model"
)

// buttonsEnv is a screen of buttons at fixed points: a click on one is
// performed (recorded) and changes the picture.
type buttonsEnv struct {
	mu        sync.Mutex
	at        map[image.Point]computer.Element
	performed []string
	n         int
}

func (p *buttonsEnv) Screenshot(context.Context) (computer.Screenshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	img := image.NewRGBA(image.Rect(0, 0, 200, 100))
	c := color.RGBA{uint8(30 * p.n), 80, 160, 255}
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return computer.Screenshot{}, err
	}
	return computer.Screenshot{PNG: buf.Bytes(), Width: 200, Height: 100}, nil
}

func (p *buttonsEnv) Inspect(_ context.Context, a computer.Action) (computer.Element, error) {
	if el, ok := p.at[image.Pt(a.X, a.Y)]; ok {
		return el, nil
	}
	return computer.Element{Found: true, Tag: "div"}, nil
}

func (p *buttonsEnv) Perform(_ context.Context, a computer.Action) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if el, ok := p.at[image.Pt(a.X, a.Y)]; ok && len(el.Texts) > 0 {
		p.performed = append(p.performed, el.Texts[0])
	}
	return nil
}

func (p *buttonsEnv) Blocked() []computer.BlockedRequest { return nil }

// firstImages reports whether the request's first message carries an image.
type firstImages struct {
	model.Model
	mu    sync.Mutex
	first []bool
}

func (f *firstImages) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	img := false
	for _, b := range req.Messages[0].Blocks {
		img = img || b.Kind == model.KindImage
	}
	f.mu.Lock()
	f.first = append(f.first, img)
	f.mu.Unlock()
	return f.Model.Generate(ctx, req)
}

// The plan (issue 17 for computer use): the model states the irreversible
// actions its task needs before it sees the screen; the user is asked
// once; inside the plan such actions run unasked, outside it they are
// refused unasked, so a user who says yes to everything is not the last
// guard. Attack cases try every way past it; legitimate ones show the
// task's own actions still run.
func TestPlan(t *testing.T) {
	t.Parallel()
	page := map[image.Point]computer.Element{
		{10, 10}: {Found: true, Tag: "button", Texts: []string{"Pay 129 kr"}},
		{20, 10}: {Found: true, Tag: "button", Texts: []string{"Delete account"}},
		{30, 10}: {Found: true, Tag: "button", Texts: []string{"Confirm: delete account"}},
		{40, 10}: {Found: true, Tag: "iframe", Opaque: true},
		{50, 10}: {Found: true, Tag: "a", Texts: []string{"Add to cart"}},
		{60, 10}: {Found: true, Tag: "button", Texts: []string{"Go"}, Submits: true, FormAction: "/checkout/payNow"},
		{70, 10}: {Found: true, Tag: "button", Texts: []string{"Köp nu"}},
	}
	plan := func(kinds ...string) string {
		var acts []map[string]any
		for _, k := range kinds {
			acts = append(acts, map[string]any{"kind": k})
		}
		b, _ := json.Marshal(map[string]any{"actions": append([]map[string]any{}, acts...)})
		return `{"action":"plan","plan":` + string(b) + `}`
	}
	click := func(x int) string { return `{"action":"click","x":` + itoa(x) + `,"y":10}` }
	tests := []struct {
		name       string
		steps      []string
		given      *computer.Plan
		yes        bool
		performed  []string
		asked      int  // questions put to the user
		late       bool // the plan question says it came after the screen
		imageFirst bool // the task's message carries the screen
	}{
		{name: "legit: a purchase inside the plan runs; one question, the plan's",
			steps: []string{plan("purchase"), click(50), click(10)}, yes: true,
			performed: []string{"Add to cart", "Pay 129 kr"}, asked: 1},
		{name: "legit: an empty plan asks nothing; reversible clicks run",
			steps: []string{plan(), click(50)}, yes: false,
			performed: []string{"Add to cart"}},
		{name: "legit: a plan given with the task: the screen comes with the task, nothing asked",
			steps: []string{click(10)}, given: &computer.Plan{Actions: []computer.PlannedAction{{Kind: "purchase"}}},
			performed: []string{"Pay 129 kr"}, imageFirst: true},
		{name: "legit: a purchase word in another language is the same kind",
			steps: []string{plan("purchase"), click(70)}, yes: true,
			performed: []string{"Köp nu"}, asked: 1},
		{name: "attack: the empty plan, then the page's delete: refused unasked, though the user says yes to all",
			steps: []string{plan(), click(20)}, yes: true},
		{name: "attack: no plan stated: an irreversible click is refused unasked",
			steps: []string{click(10)}, yes: true},
		{name: "attack: a purchase plan does not cover a delete",
			steps: []string{plan("purchase"), click(20)}, yes: true, asked: 1},
		{name: "attack: an element with two kinds needs both (confirm and delete)",
			steps: []string{plan("confirm"), click(30)}, yes: true, asked: 1},
		{name: "attack: runs are counted: a second payment is refused",
			steps: []string{plan("purchase"), click(10), click(10)}, yes: true,
			performed: []string{"Pay 129 kr"}, asked: 1},
		{name: "attack: a control that cannot be inspected is never in a plan",
			steps: []string{plan("purchase", "send", "delete", "publish", "transfer", "confirm"), click(40)}, yes: true, asked: 1},
		{name: "attack: a form whose action pays, behind an innocent label, is a purchase",
			steps: []string{plan("send"), click(60)}, yes: true, asked: 1},
		{name: "attack: a plan stated after the screen was seen is asked, marked late",
			steps: []string{`{"action":"wait"}`, plan("delete"), click(20)}, yes: true,
			performed: []string{"Delete account"}, asked: 1, late: true},
		{name: "before the plan the screen is not shown: a click has nowhere to land",
			steps: []string{click(50), plan(), click(50)}, yes: true,
			performed: []string{"Add to cart"}},
		{name: "a declined plan: its purchase is refused, and not asked again",
			steps: []string{plan("purchase"), click(10)}, yes: false, asked: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			script, err := computer.ParseScript([]byte(`{"steps":[` + strings.Join(tt.steps, ",") + `,{"action":"done","summary":"ok"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			env := &buttonsEnv{at: page}
			rec := &approve.Recorder{Next: approve.Fixed(tt.yes)}
			m := &firstImages{Model: computer.NewScripted(script)}
			s, err := computer.New(computer.Config{Model: m, Env: env, Approver: rec, Planned: true, Plan: tt.given})
			if err != nil {
				t.Fatal(err)
			}
			res := s.Run(t.Context(), "Do the task.")
			if res.Err != nil {
				t.Fatalf("run: %v", res.Err)
			}
			if !slices.Equal(env.performed, tt.performed) {
				t.Errorf("performed %q, want %q", env.performed, tt.performed)
			}
			reqs := rec.Requests()
			if len(reqs) != tt.asked {
				t.Errorf("asked %d times (%+v), want %d", len(reqs), reqs, tt.asked)
			}
			for _, r := range reqs {
				if r.Tool != computer.PlanTool || r.Contract == "" {
					t.Errorf("question %+v: want only the plan, shown", r)
				}
				if late := strings.Contains(r.Contract, "after the model saw the screen"); late != tt.late {
					t.Errorf("plan question %q: marked late %v, want %v", r.Contract, late, tt.late)
				}
			}
			if len(m.first) == 0 || m.first[0] != tt.imageFirst {
				t.Errorf("first request carries the screen: %v, want %v", m.first, tt.imageFirst)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A plan that names an unknown kind or too many runs is refused with what
// to write, in the script and in the config.
func TestParsePlan(t *testing.T) {
	t.Parallel()
	words := computer.NewWords(computer.DefaultWords())
	for _, tc := range []struct{ in, want string }{
		{`{"actions":[{"kind":"buy"}]}`, `unknown kind "buy"`},
		{`{"actions":[{"kind":"purchase","times":50}]}`, "give a count from 1 to 20"},
		{`{"actions":[{"kind":"purchase","count":1}]}`, "count"},
		{`{"actions":[{"kind":"send"}],}`, "invalid"},
	} {
		_, err := computer.ParsePlan([]byte(tc.in), words)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePlan(%s) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
	p, err := computer.ParsePlan([]byte(`{"actions":[{"kind":"purchase"},{"kind":"send","times":2}]}`), words)
	if err != nil || p.String() != "purchase ×1, send ×2" {
		t.Errorf("ParsePlan = %v, %v", p, err)
	}
	if _, err := computer.New(computer.Config{Model: computer.NewScripted(&computer.Script{}), Env: &buttonsEnv{},
		Plan: &computer.Plan{Actions: []computer.PlannedAction{{Kind: "steal"}}}}); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("New with a bad plan: %v", err)
	}
}
