package computer

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/jsonx"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/schema"
)

// Observations the model is told after an action.
const (
	NoEffect   = "the screen did not change — the action had no effect"
	ScreenMove = "the screen changed"
	Waited     = "waited; the screen did not change"
)

// Screen is one session's screen: the Env, the policy, the last screenshot
// and what rein observed. Its tools (click, type, scroll, key, wait) act on
// the Env and return the observation and the new screenshot; its Gate
// judges them by the element they act on. One Screen serves one run at a
// time.
type Screen struct {
	env    Env
	policy Policy
	audit  AuditLog

	mu      sync.Mutex
	shot    Screenshot
	hash    string
	pending bool               // an action had no effect and no later action changed the screen yet
	seen    map[Action]Element // inspections of the current screen
	stats   Stats
	plan    planState
	given   *Plan // the plan given with the task (Config.Plan), in force at every run's start
}

// Stats is what a Screen observed in a run.
type Stats struct {
	// Actions counts the actions performed.
	Actions int `json:"actions"`
	// NoEffect counts actions after which the screen was unchanged, and
	// Recoveries those of them followed by an action that changed it.
	NoEffect   int `json:"no_effect"`
	Recoveries int `json:"recoveries"`
	// Blocked are the requests the environment refused (off the allowlist).
	Blocked []BlockedRequest `json:"blocked,omitempty"`
	// Final is the last screenshot taken.
	Final Screenshot `json:"-"`
}

// NewScreen returns the screen over env under policy (a zero Words means
// DefaultWords). log, when not nil, receives a verdict record (gate
// network) for every request the environment blocked.
func NewScreen(env Env, policy Policy, log AuditLog) *Screen {
	if policy.Words.phrases == nil {
		policy.Words = NewWords(DefaultWords())
	}
	return &Screen{env: env, policy: policy, audit: log}
}

// reset forgets what the screen observed, for a new run.
func (s *Screen) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats, s.pending, s.seen = Stats{}, false, nil
	s.plan = planState{on: s.plan.on}
	if s.given != nil {
		s.plan.approve(s.given)
	}
}

// Stats returns what the screen observed so far.
func (s *Screen) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Blocked = append([]BlockedRequest(nil), st.Blocked...)
	return st
}

// Tools returns the action tools: click, type, scroll, key and wait.
//
// In a session that plans (Screen.Planned), plan too.
func (s *Screen) Tools() []tool.Tool {
	tools := []tool.Tool{s.action(Click), s.action(Type), s.action(Scroll), s.action(Key), s.action(Wait)}
	s.mu.Lock()
	on := s.plan.on
	s.mu.Unlock()
	if on {
		tools = append(tools, s.planTool())
	}
	return tools
}

// Planned makes the screen plan: irreversible actions need a plan in
// force (the plan tool's, approved by the user, or given, which is in
// force at every run's start and may be nil), and the screen is shown
// only after the model has stated its plan. Call it before Tools.
func (s *Screen) Planned(given *Plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plan.on, s.given = true, given
	if given != nil {
		s.plan.approve(given)
	}
}

// Attach takes the first screenshot, for the task's message (agent.Config.Attach):
// the screen and the requests blocked while the page loaded.
//
// In a session that plans, the screen is shown only after the plan (the
// plan tool's result, or the first action's): the task's message says so.
func (s *Screen) Attach(ctx context.Context) ([]model.Block, error) {
	s.mu.Lock()
	planning := s.plan.on && !s.plan.inForce
	s.mu.Unlock()
	if planning {
		return []model.Block{model.TextBlock("The screen is shown after you state your plan with plan().")}, nil
	}
	return s.look0(ctx)
}

// look0 takes the first screenshot and returns it as Attach does.
func (s *Screen) look0(ctx context.Context) ([]model.Block, error) {
	if err := s.look(ctx); err != nil {
		return nil, err
	}
	more, err := s.drain()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	shot := s.shot
	s.mu.Unlock()
	text := fmt.Sprintf("The screen as it is now (%d×%d pixels)%s.", shot.Width, shot.Height, more)
	return []model.Block{model.TextBlock(text), model.ImageBlock(model.Image{MediaType: "image/png", Data: shot.PNG})}, nil
}

// look takes a screenshot and forgets the inspections of the last one.
func (s *Screen) look(ctx context.Context) error {
	shot, err := s.env.Screenshot(ctx)
	if err != nil {
		return fmt.Errorf("take a screenshot: %w", err)
	}
	h, err := PixelHash(shot.PNG)
	if err != nil {
		return fmt.Errorf("read the screenshot: %w", err)
	}
	s.mu.Lock()
	s.shot, s.hash, s.seen = shot, h, nil
	s.plan.shown = true
	s.stats.Final = shot
	s.mu.Unlock()
	return nil
}

func (s *Screen) size() (w, h int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shot.Width, s.shot.Height
}

// drain records the requests the environment blocked since the last call
// and returns what to tell the model about them.
func (s *Screen) drain() (string, error) {
	obs := ""
	for _, b := range s.env.Blocked() {
		s.mu.Lock()
		s.stats.Blocked = append(s.stats.Blocked, b)
		s.mu.Unlock()
		kind := "a sub-resource"
		if b.Navigation {
			kind = "a page load"
		}
		if s.audit != nil {
			if err := s.audit.Write(audit.Record{Type: audit.Verdict, Tool: "browser.request", Args: mustJSON(b),
				Decision: audit.DecisionOf(gate.Deny), Gate: GateNetwork,
				Reason: fmt.Sprintf("%s from %s blocked: host %q is not on the allowlist", kind, b.URL, b.Host)}); err != nil {
				// rein does not go on unrecorded.
				return "", fmt.Errorf("%w: audit log: %w", tool.ErrFatal, err)
			}
		}
		obs += fmt.Sprintf("; rein blocked %s from %s (not on the allowlist)", kind, b.Host)
	}
	return obs, nil
}

// forget drops the inspections made so far: the screen gate calls it as
// it begins to judge a call.
func (s *Screen) forget() {
	s.mu.Lock()
	s.seen = nil
	s.mu.Unlock()
}

// inspect returns the element a would act on, asked of the Env once per
// call (the screen gate forgets earlier calls' inspections) and per
// screenshot. An element that cannot be inspected is opaque, which the
// policy judges irreversible (fail closed); that too is kept for the call,
// so its verdict and its effect class agree.
func (s *Screen) inspect(ctx context.Context, a Action) Element {
	s.mu.Lock()
	el, ok := s.seen[a]
	s.mu.Unlock()
	if ok {
		return el
	}
	el, err := s.env.Inspect(ctx, a)
	if err != nil {
		el = Element{Found: true, Tag: "unknown", Opaque: true}
	}
	s.mu.Lock()
	if s.seen == nil {
		s.seen = map[Action]Element{}
	}
	s.seen[a] = el
	s.mu.Unlock()
	return el
}

// judge applies the policy to a on the element it would act on.
func (s *Screen) judge(ctx context.Context, a Action) gate.Verdict {
	if s.policy.Off || a.Kind == Wait || a.Kind == Scroll {
		return s.policy.Judge(a, Element{})
	}
	return s.policy.Judge(a, s.inspect(ctx, a))
}

// act performs a, takes the new screenshot and says what changed.
func (s *Screen) act(ctx context.Context, a Action) (string, []model.Image, error) {
	s.mu.Lock()
	before := s.hash
	s.mu.Unlock()
	perr := s.env.Perform(ctx, a)
	if ctx.Err() != nil {
		return "", nil, context.Cause(ctx) // an abort or the wall time: the loop stops
	}
	if err := s.look(ctx); err != nil {
		return "", nil, fmt.Errorf("%w: %w", tool.ErrFatal, err) // no screen, no next step
	}
	s.mu.Lock()
	s.stats.Actions++
	changed := s.hash != before
	obs := ""
	switch {
	case perr != nil:
	case a.Kind == Wait && !changed:
		obs = Waited
	case !changed:
		obs = NoEffect
		s.stats.NoEffect++
		s.pending = true
	default:
		obs = ScreenMove
		if s.pending {
			s.stats.Recoveries++
			s.pending = false
		}
	}
	shot := s.shot
	s.mu.Unlock()
	more, err := s.drain()
	if err != nil {
		return "", nil, err
	}
	images := []model.Image{{MediaType: "image/png", Data: shot.PNG}}
	if perr != nil {
		return "", images, fmt.Errorf("the action failed: %w%s", perr, more)
	}
	return obs + more, images, nil
}

// The action tools' schemas.
var schemas = map[Kind]string{
	Click:  `{"type":"object","properties":{"x":{"type":"integer","minimum":0},"y":{"type":"integer","minimum":0}},"required":["x","y"],"additionalProperties":false}`,
	Type:   `{"type":"object","properties":{"text":{"type":"string","minLength":1}},"required":["text"],"additionalProperties":false}`,
	Scroll: `{"type":"object","properties":{"dy":{"type":"integer"}},"required":["dy"],"additionalProperties":false}`,
	Key:    `{"type":"object","properties":{"name":{"type":"string","enum":["Enter","Tab","Escape","Backspace","Delete","Space","ArrowUp","ArrowDown","ArrowLeft","ArrowRight","PageUp","PageDown","Home","End"]}},"required":["name"],"additionalProperties":false}`,
	Wait:   `{"type":"object","properties":{},"additionalProperties":false}`,
}

var descriptions = map[Kind]string{
	Click:  "Click at pixel (x, y) of the latest screenshot. Returns what changed and a new screenshot.",
	Type:   fmt.Sprintf("Type text into the focused field (at most %d bytes at a time). Returns what changed and a new screenshot.", MaxTypeLen),
	Scroll: "Scroll by dy pixels; positive scrolls down. Returns what changed and a new screenshot.",
	Key:    "Press a key: Enter, Tab, Escape, Backspace, Delete, Space, ArrowUp/Down/Left/Right, PageUp, PageDown, Home, End. Returns what changed and a new screenshot.",
	Wait:   "Wait for the page to settle, then take a new screenshot.",
}

// staticEffect is each tool's class when nothing is known of the call:
// a click or a key can pay (EffectOf tells per call), typing only fills a
// field, scrolling and waiting change nothing.
var staticEffect = map[Kind]tool.Effect{
	Click: tool.Irreversible, Key: tool.Irreversible, Type: tool.Reversible, Scroll: tool.ReadOnly, Wait: tool.ReadOnly,
}

// actionTool is one action as a tool of a Screen.
type actionTool struct {
	kind   Kind
	s      *Screen
	schema *schema.Schema
}

var (
	_ tool.Tool      = (*actionTool)(nil)
	_ tool.Validator = (*actionTool)(nil)
	_ tool.Effector  = (*actionTool)(nil)
	_ tool.Imager    = (*actionTool)(nil)
)

func (s *Screen) action(k Kind) *actionTool {
	return &actionTool{kind: k, s: s, schema: schema.MustCompile(string(k), []byte(schemas[k]))}
}

// Spec describes the action to the model and the gates.
func (t *actionTool) Spec() tool.Spec {
	return tool.Spec{Name: string(t.kind), Description: descriptions[t.kind], Schema: json.RawMessage(schemas[t.kind]),
		Effect: staticEffect[t.kind]}
}

// decode checks args against the schema and the current screen.
func (t *actionTool) decode(args json.RawMessage) (Action, error) {
	if err := t.schema.Validate(args); err != nil {
		return Action{}, fmt.Errorf("%w for %s: %w", tool.ErrArgs, t.kind, err)
	}
	a, err := ActionOf(string(t.kind), args)
	if err != nil {
		return Action{}, err
	}
	w, h := t.s.size()
	if err := a.Validate(w, h); err != nil {
		return Action{}, fmt.Errorf("%w for %s: %w", tool.ErrArgs, t.kind, err)
	}
	return a, nil
}

// Validate checks the arguments against the schema and the screen the
// model saw last (a click inside it, text within MaxTypeLen, ...).
func (t *actionTool) Validate(args json.RawMessage) error {
	_, err := t.decode(args)
	return err
}

// EffectOf classes the call by the element it would act on: irreversible
// when the policy would ask a human (a Pay button, Enter in a form that
// sends), read-only for scroll and wait, reversible otherwise.
func (t *actionTool) EffectOf(ctx context.Context, args json.RawMessage) (tool.Effect, error) {
	a, err := t.decode(args)
	if err != nil {
		return 0, err
	}
	switch a.Kind {
	case Scroll, Wait:
		return tool.ReadOnly, nil
	case Type:
		return tool.Reversible, nil
	}
	if t.s.judge(ctx, a).Decision == gate.Ask {
		return tool.Irreversible, nil
	}
	return tool.Reversible, nil
}

// Run performs the action; the loop calls RunImages, which also returns
// the screenshot.
func (t *actionTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	out, _, err := t.RunImages(ctx, args)
	return out, err
}

// RunImages performs the action and returns the observation and the new
// screenshot.
func (t *actionTool) RunImages(ctx context.Context, args json.RawMessage) (string, []model.Image, error) {
	a, err := t.decode(args)
	if err != nil {
		return "", nil, err
	}
	return t.s.act(ctx, a)
}

// ActionOf decodes a call of the action tool name (click, type, scroll,
// key or wait) into an Action, strictly: unknown fields are errors. It does
// not check the action against a screen (Action.Validate does).
func ActionOf(name string, args json.RawMessage) (Action, error) {
	var a Action
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	switch k := Kind(name); k {
	case Click:
		var v struct {
			X int `json:"x"`
			Y int `json:"y"`
		}
		err := decodeArgs(k, args, &v)
		return Action{Kind: k, X: v.X, Y: v.Y}, err
	case Type:
		var v struct {
			Text string `json:"text"`
		}
		err := decodeArgs(k, args, &v)
		return Action{Kind: k, Text: v.Text}, err
	case Scroll:
		var v struct {
			DY int `json:"dy"`
		}
		err := decodeArgs(k, args, &v)
		return Action{Kind: k, DY: v.DY}, err
	case Key:
		var v struct {
			Name string `json:"name"`
		}
		err := decodeArgs(k, args, &v)
		return Action{Kind: k, Name: v.Name}, err
	case Wait:
		var v struct{}
		err := decodeArgs(k, args, &v)
		return Action{Kind: k}, err
	}
	return a, fmt.Errorf("%w: %q is not a computer action: use click, type, scroll, key or wait", tool.ErrArgs, name)
}

func decodeArgs(k Kind, args json.RawMessage, v any) error {
	if err := jsonx.DecodeStrict(args, v); err != nil {
		return fmt.Errorf("%w for %s: %w", tool.ErrArgs, k, err)
	}
	return nil
}

// Args returns the arguments of a's tool call, as ActionOf reads them.
func (a Action) Args() json.RawMessage {
	var v any
	switch a.Kind {
	case Click:
		v = struct {
			X int `json:"x"`
			Y int `json:"y"`
		}{a.X, a.Y}
	case Type:
		v = struct {
			Text string `json:"text"`
		}{a.Text}
	case Scroll:
		v = struct {
			DY int `json:"dy"`
		}{a.DY}
	case Key:
		v = struct {
			Name string `json:"name"`
		}{a.Name}
	default:
		v = struct{}{}
	}
	return mustJSON(v)
}

// Turn is one action of a run and what the model was told after it: the
// observation, the error, or the refusal.
type Turn struct {
	Action      Action `json:"action"`
	Observation string `json:"observation"`
	Refused     bool   `json:"refused,omitempty"`
}

// Turns returns the actions of a conversation (agent.Result.Messages) with
// what the model was told after each, in order. Calls of tools that are
// not actions are left out.
func Turns(msgs []model.Message) []Turn {
	results := map[string]*model.ToolResult{}
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Kind == model.KindToolResult && b.Result != nil {
				results[b.Result.CallID] = b.Result
			}
		}
	}
	var turns []Turn
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Kind != model.KindToolCall || b.Call == nil {
				continue
			}
			if _, ok := schemas[Kind(b.Call.Name)]; !ok {
				continue
			}
			a, _ := ActionOf(b.Call.Name, b.Call.Args) // arguments it cannot read: the kind alone
			t := Turn{Action: a}
			if r := results[b.Call.ID]; r != nil {
				t.Observation, t.Refused = r.Content, r.Refused
			}
			turns = append(turns, t)
		}
	}
	return turns
}
