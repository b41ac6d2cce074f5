// Package gate decides whether a tool call may run. A Gate is a small value
// that looks at one call and returns a Verdict: Allow, Ask or Deny, with its
// name and a reason. A Pipeline runs gates in a fixed order, cheapest first,
// and resolves Ask through an approver.
//
// Rules of the pipeline: a Deny is final and no later gate can undo it; an
// Ask needs a human's yes, and every other gate must still allow the call; a
// gate that fails or panics denies (fail closed). Gates decide; they never run
// tools and never talk to the model.
package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate/cmdline"
	"github.com/reinhq/rein/model/jsonx"
	"github.com/reinhq/rein/tool"
)

// Decision is a gate's answer.
type Decision uint8

// The three answers. The zero value is Deny, so a forgotten verdict refuses.
const (
	Deny Decision = iota
	Ask
	Allow
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("decision(%d)", uint8(d))
}

// MarshalText renders the decision as "allow", "ask" or "deny".
func (d Decision) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses "allow", "ask" or "deny".
func (d *Decision) UnmarshalText(b []byte) error {
	switch string(b) {
	case "allow":
		*d = Allow
	case "ask":
		*d = Ask
	case "deny":
		*d = Deny
	default:
		return fmt.Errorf("decision %q: want allow, ask or deny", b)
	}
	return nil
}

// Verdict is a gate's answer with its reasons.
type Verdict struct {
	Decision Decision `json:"decision"`
	Gate     string   `json:"gate"`
	// Reason is for the human and the audit log: precise, may name rules.
	Reason string `json:"reason"`
	// Hint is what the model is told when the call does not run: what was
	// refused, why in general terms, and what to do next. It never reveals
	// the policy's internals. Empty means Reason is safe to show.
	Hint string `json:"-"`
	// Declined, on an Ask, is what the model is told when the human says
	// no (or no answer comes); empty means the pipeline's general words
	// (carry on without the call). A gate sets it when a no means more,
	// as on screen, where a refused payment ends the task.
	Declined string `json:"-"`
	// Answer, on a verdict of the approval stage, is the human's answer
	// that decided the call (its scope, the pattern it covers and who gave
	// it; By is "rule:session" or "rule:always" when a sticky answer
	// given earlier decided it), for the audit log. Nil otherwise.
	Answer *approve.Answer `json:"answer,omitempty"`
	// Covers, on an Allow, says the call was approved in advance (it is
	// inside the task contract the user approved): what other gates would
	// ask about is then allowed without asking, while a Deny still wins.
	Covers bool `json:"-"`
	// Contract, on an Ask, is the task contract (or amendment) being
	// proposed, as approve.Request.Contract shows it.
	Contract string `json:"-"`
}

// ForModel returns the text the model sees for a refused call.
func (v Verdict) ForModel() string {
	if v.Hint != "" {
		return v.Hint
	}
	return v.Reason
}

// Call is one tool call as the gates see it. What the gates read of it —
// the arguments parsed (Value) and decoded (Decoded), the command lines,
// paths and URLs (Commands, Paths, URLs) — is computed once, on first use,
// and kept: every gate judges the same values, and the tool runs the
// decoded one. A Call is used by one goroutine at a time.
type Call struct {
	ID   string
	Name string
	Args json.RawMessage
	// Tool is the registered tool of that name, nil when there is none.
	Tool tool.Tool

	parsed bool           // Args was parsed (once, on first use)
	value  any            // Args parsed; nil when not JSON
	fields map[string]any // value when it is an object

	// The views (views.go), each computed once, on first use.
	cmds      []cmdline.Line
	cmdsDone  bool
	parser    *syntax.Parser
	paths     []PathArg
	pathsDone bool
	urls      []URLArg
	urlsDone  bool
	memo      []memoEntry

	decodeDone bool  // decode ran (once, on first use)
	decoded    any   // Args decoded into the tool's typed value, when it has one
	decodeErr  error // why Args are not acceptable to the tool

	effect    tool.Effect // the call's effect class, once decided
	effectSet bool
}

// Effect returns the call's effect class (tool.EffectOf), decided on first
// use and kept: every gate, the loop's intent record and the per-run count
// after the call ran see the same class, although the screen or the world
// may have changed since. A call without a tool is Irreversible.
func (c *Call) Effect(ctx context.Context) tool.Effect {
	if !c.effectSet {
		c.effect, c.effectSet = tool.Irreversible, true
		if c.Tool != nil {
			c.effect = tool.EffectOf(ctx, c.Tool, c.Args)
		}
	}
	return c.effect
}

// Decoded returns the arguments checked and decoded, once per call, into
// the tool's typed value (tool.Decoder), the value the tool runs with; nil
// for a tool that does not decode (it is checked with tool.Validator, or
// only for being a JSON object). err says why the tool does not accept the
// arguments. Every gate that needs the typed value, and the loop that runs
// the tool, read it here: the validation gate's verdict, the existence
// check and the run are all of the same value.
func (c *Call) Decoded() (decoded any, err error) {
	if !c.decodeDone {
		c.decodeDone = true
		c.decoded, c.decodeErr = c.decode()
	}
	return c.decoded, c.decodeErr
}

func (c *Call) decode() (any, error) {
	switch t := c.Tool.(type) {
	case tool.Decoder:
		v, parsed := c.Value()
		if !parsed {
			v = nil
		}
		return t.Decode(c.Args, v)
	case tool.ValueValidator:
		if v, parsed := c.Value(); parsed {
			return t.ValidateValue(c.Args, v)
		}
		return nil, t.Validate(c.Args) // says where the JSON is broken
	case tool.Validator:
		return nil, t.Validate(c.Args)
	}
	if !jsonx.IsObject(c.Args) {
		return nil, fmt.Errorf("the arguments of %s must be a JSON object", c.Name)
	}
	return nil, nil
}

func (c *Call) parse() {
	if c.parsed {
		return
	}
	c.parsed = true
	v, ok := parseFast(c.Args)
	if !ok {
		var slow any // apart from v, which would escape through &slow
		if err := json.Unmarshal(c.Args, &slow); err != nil {
			return // not one JSON value (trailing data included)
		}
		v = slow
	}
	c.value = v
	c.fields, _ = v.(map[string]any)
}

// Value returns the arguments parsed once for every gate (numbers as
// float64, as encoding/json parses them); ok is false when they are not one
// JSON value.
func (c *Call) Value() (v any, ok bool) {
	c.parse()
	return c.value, c.value != nil || bytes.Equal(bytes.TrimSpace(c.Args), []byte("null"))
}

// Has reports whether the arguments are an object with the field name.
func (c *Call) Has(name string) bool {
	c.parse()
	_, ok := c.fields[name]
	return ok
}

// Str returns the top-level string argument name. ok is false when the
// argument is absent or not a string; gates after validation may rely on
// the schema having checked it.
func (c *Call) Str(name string) (val string, ok bool) {
	c.parse()
	val, ok = c.fields[name].(string)
	return val, ok
}

// Role returns the tool's declared argument role for name (zero when none).
func (c *Call) Role(name string) tool.Role {
	if c.Tool == nil {
		return 0
	}
	return c.Tool.Spec().Roles[name]
}

// ArgsWith appends to dst the names of the arguments the call's tool marks
// with role r, sorted, and returns the extended slice; nothing when the call
// has no tool. Given spare capacity (var buf [4]string; c.ArgsWith(buf[:0],
// r)), it allocates nothing, unlike tool.Spec.ArgsWith: gates call it on
// every call.
func (c *Call) ArgsWith(dst []string, r tool.Role) []string {
	if c.Tool == nil {
		return dst
	}
	start := len(dst)
	for name, role := range c.Tool.Spec().Roles {
		if role == r {
			dst = append(dst, name)
		}
	}
	slices.Sort(dst[start:])
	return dst
}

// Gate is one check of the pipeline.
type Gate interface {
	// Name identifies the gate in verdicts and the audit log.
	Name() string
	// Check judges a call. It must not run the tool or change the world.
	Check(ctx context.Context, c *Call) Verdict
}

// Offerer is implemented by gates that hide tools from the model: the loop
// offers a tool only when every such gate offers it.
type Offerer interface {
	Offers(tool string) bool
}

// Counter is implemented by gates that count calls that actually ran (the
// per-run limit on side effects). The loop reports each call after its tool
// ran, whatever the tool returned, through Pipeline.Ran.
type Counter interface {
	Ran(c *Call)
}

// Gate names used by this package's gates and the loop.
const (
	NameBudget       = "budget"
	NameAvailability = "availability"
	NameValidation   = "validation"
	NameConfirm      = "confirm"
	NameApproval     = "approval"
	NamePipeline     = "pipeline"
)

// Pipeline runs gates in order and resolves Ask through an approver.
type Pipeline struct {
	gates    []Gate
	approver approve.Approver
	noAsk    bool
	sticky   *sessionRules // nil: every answer is for one call (WithStickyAnswers)
	// parsers lends each call under evaluation a shell parser for its
	// command lines (Call.Commands): a parser is costly to make, and
	// what it parses shares nothing with the next parse.
	parsers sync.Pool
}

// WithoutAsking makes the pipeline refuse, instead of ask about, every call a
// gate would ask a human about (bypass mode: nobody is asked, so what needs
// a yes does not run). It returns p.
func (p *Pipeline) WithoutAsking() *Pipeline {
	p.noAsk = true
	return p
}

// NewPipeline returns a pipeline of gates, evaluated in the order given.
// A nil approver says no to everything.
func NewPipeline(approver approve.Approver, gates ...Gate) *Pipeline {
	if approver == nil {
		approver = approve.Deny{}
	}
	p := &Pipeline{gates: gates, approver: approver}
	p.parsers.New = func() any { return cmdline.NewParser() }
	return p
}

// Names returns the gates' names in order, the approval stage last.
func (p *Pipeline) Names() []string {
	names := make([]string, 0, len(p.gates)+1)
	for _, g := range p.gates {
		names = append(names, g.Name())
	}
	return append(names, NameApproval)
}

// Offers reports whether the model may be shown the named tool.
func (p *Pipeline) Offers(tool string) bool {
	for _, g := range p.gates {
		if o, ok := g.(Offerer); ok && !o.Offers(tool) {
			return false
		}
	}
	return true
}

// InForcer is implemented by a gate that knows the task contract in
// force (gate/contract); its text goes in every approval request.
type InForcer interface {
	InForce() string
}

func (p *Pipeline) inForce() string {
	for _, g := range p.gates {
		if f, ok := g.(InForcer); ok {
			if s := f.InForce(); s != "" {
				return s
			}
		}
	}
	return ""
}

// Ran tells every Counter gate that the call's tool ran.
func (p *Pipeline) Ran(c *Call) {
	for _, g := range p.gates {
		if k, ok := g.(Counter); ok {
			k.Ran(c)
		}
	}
}

// Evaluate runs every gate and returns the first Deny, else the first Ask,
// else Allow. It asks no one: an Ask is returned as it is.
func (p *Pipeline) Evaluate(ctx context.Context, c *Call) Verdict {
	v, _ := p.evaluate(ctx, c, false)
	return v
}

// evaluate is Evaluate; with askers it also returns the names of every
// gate that asked, in order, when the verdict is Ask.
func (p *Pipeline) evaluate(ctx context.Context, c *Call, askers bool) (Verdict, []string) {
	if c.parser == nil {
		if pr, ok := p.parsers.Get().(*syntax.Parser); ok {
			c.parser = pr
			defer func() {
				c.parser = nil
				p.parsers.Put(pr)
			}()
		}
	}
	var ask, covered Verdict
	var who []string
	asked, covers := false, false
	for _, g := range p.gates {
		v := check(ctx, g, c)
		switch v.Decision {
		case Deny:
			return v, nil
		case Ask:
			if !asked {
				ask, asked = v, true
			}
			if askers {
				who = append(who, v.Gate)
			}
		case Allow:
			if v.Covers && !covers {
				covered, covers = v, true
			}
		}
	}
	if asked && covers && ask.Contract == "" {
		covered.Reason += fmt.Sprintf("; approved in advance, so %s does not ask (%s)", ask.Gate, ask.Reason)
		return covered, nil
	}
	if asked {
		if p.noAsk {
			return Verdict{Decision: Deny, Gate: ask.Gate,
				Reason: ask.Reason + "; no one is asked in this mode, so it is refused: run it yourself outside the agent if you mean it",
				Hint: fmt.Sprintf("This %s call needs a human's confirmation, and this session asks no one, so it did not run. "+
					"Do not retry it; tell the user. If they mean it, they can run it themselves outside the agent.", c.Name)}, nil
		}
		return ask, who
	}
	return Verdict{Decision: Allow, Gate: NamePipeline, Reason: "every gate allows it"}, nil
}

// Decide evaluates the call and, when a gate asks, asks the approver. The
// result is Allow or Deny, never Ask. A no, an error or a cancelled context
// denies. With sticky answers (WithStickyAnswers), a session rule that
// answers the question decides instead of the approver, and an answer for
// the session or for good becomes one.
func (p *Pipeline) Decide(ctx context.Context, c *Call) Verdict {
	v, asked := p.evaluate(ctx, c, p.sticky != nil)
	if v.Decision != Ask {
		return v
	}
	req := approve.Request{CallID: c.ID, Tool: c.Name, Args: c.Args, Gate: v.Gate, Reason: v.Reason, Contract: v.Contract}
	if req.Contract == "" {
		req.Contract = p.inForce()
	}
	if c.Tool != nil {
		req.Roles = c.Tool.Spec().Roles
	}
	var pat Pattern
	if p.sticky != nil {
		var ok bool
		if pat, ok = PatternOf(c); ok {
			req.Pattern = pat.String()
			if sv, ok := p.sessionVerdict(c, v, req.Pattern, asked); ok {
				return sv
			}
		}
	}
	ans, err := approve.Choose(ctx, p.approver, req)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	ok := err == nil && ans.Yes
	saved := ""
	if err == nil && req.Pattern != "" && ans.Scope != approve.Once {
		p.sticky.add(c.Name, req.Pattern, sessionRule{yes: ans.Yes, gates: asked, ans: ans})
		if ans.Scope == approve.Always {
			switch {
			case p.sticky.saver == nil:
				saved = "; no user config to save the rule in, so it holds for this session"
			default:
				if serr := p.sticky.saver.SaveRule(ctx, pat, ans.Yes); serr != nil {
					saved = fmt.Sprintf("; the rule could not be saved (%v), so it holds for this session", serr)
				} else {
					saved = "; saved as a rule in the user's config"
				}
			}
		}
	}
	var answer *approve.Answer
	if err == nil {
		answer = &ans
	}
	hint := v.Declined
	if hint == "" {
		hint = notApproved(c.Name)
	}
	switch {
	case err != nil:
		return Verdict{Decision: Deny, Gate: NameApproval,
			Reason: fmt.Sprintf("%s (asked by %s): approval failed, which counts as no: %v", v.Reason, v.Gate, err),
			Hint:   hint}
	case !ok:
		return Verdict{Decision: Deny, Gate: NameApproval, Answer: answer,
			Reason: fmt.Sprintf("%s (asked by %s): the approver said no%s%s", v.Reason, v.Gate, scopeNote(ans), saved),
			Hint:   hint}
	}
	return Verdict{Decision: Allow, Gate: NameApproval, Answer: answer,
		Reason: fmt.Sprintf("%s (asked by %s): the approver said yes%s%s", v.Reason, v.Gate, scopeNote(ans), saved)}
}

// scopeNote says how far an answer reaches, for the verdict's reason.
func scopeNote(a approve.Answer) string {
	switch a.Scope {
	case approve.Session:
		return fmt.Sprintf(" for this session to %q", a.Pattern)
	case approve.Always:
		return fmt.Sprintf(" always to %q", a.Pattern)
	}
	return ""
}

func notApproved(tool string) string {
	return fmt.Sprintf("%s needs a human's approval, and it was not given. Do not try it again; carry on without it and tell the user what was not done.", tool)
}

// check runs one gate, turning a panic or an unnamed verdict into a Deny.
func check(ctx context.Context, g Gate, c *Call) (v Verdict) {
	defer func() {
		if r := recover(); r != nil {
			v = Verdict{Decision: Deny, Gate: g.Name(), Reason: fmt.Sprintf("the gate failed (%v), so the call is refused", r),
				Hint: "This call could not be checked, so it was refused. Try a different approach."}
		}
	}()
	v = g.Check(ctx, c)
	if v.Gate == "" {
		v.Gate = g.Name()
	}
	if v.Decision > Allow {
		v = Verdict{Decision: Deny, Gate: g.Name(), Reason: fmt.Sprintf("the gate returned an unknown decision %d", v.Decision)}
	}
	return v
}

// Availability allows only the tools on the session's allowlist. The model
// is not shown the others, and a call to one anyway is refused.
type Availability struct {
	allowed map[string]bool
}

var (
	_ Gate    = (*Availability)(nil)
	_ Offerer = (*Availability)(nil)
)

// NewAvailability returns the gate for an allowlist of tool names.
func NewAvailability(allowed []string) *Availability {
	a := &Availability{allowed: make(map[string]bool, len(allowed))}
	for _, n := range allowed {
		a.allowed[n] = true
	}
	return a
}

// Name returns "availability".
func (*Availability) Name() string { return NameAvailability }

// Offers reports whether the tool is on the allowlist.
func (a *Availability) Offers(tool string) bool { return a.allowed[tool] }

// Check denies unknown tools and tools not on the allowlist.
func (a *Availability) Check(_ context.Context, c *Call) Verdict {
	switch {
	case c.Tool == nil:
		return UnknownTool(c.Name)
	case !a.allowed[c.Name]:
		return Verdict{Decision: Deny, Gate: NameAvailability,
			Reason: fmt.Sprintf("%s is not on this session's allowlist", c.Name),
			Hint:   fmt.Sprintf("The tool %s is not available for this task. Do not try it again; finish with the tools you have and tell the user what you could not do.", c.Name)}
	}
	return Verdict{Decision: Allow, Gate: NameAvailability}
}

// UnknownTool is the verdict on a call to a tool that does not exist.
func UnknownTool(name string) Verdict {
	return Verdict{Decision: Deny, Gate: NameAvailability,
		Reason: fmt.Sprintf("no tool named %q exists", name),
		Hint:   fmt.Sprintf("There is no tool named %q. Use only the tools you were given.", name)}
}

// Validation refuses arguments that are not a JSON object or that the tool's
// own validator rejects, before anything runs.
type Validation struct{}

var _ Gate = Validation{}

// Name returns "validation".
func (Validation) Name() string { return NameValidation }

// Check validates the arguments: it decodes them (Call.Decoded) and
// refuses what the tool does not accept.
func (Validation) Check(_ context.Context, c *Call) Verdict {
	if _, err := c.Decoded(); err != nil {
		return Verdict{Decision: Deny, Gate: NameValidation, Reason: err.Error(),
			Hint: fmt.Sprintf("The arguments were not accepted: %v. Fix them and call the tool again.", err)}
	}
	return Verdict{Decision: Allow, Gate: NameValidation}
}

// Confirm asks for a human's yes before any call classed irreversible runs
// (by its tool, or for these arguments: tool.Effector), and before calls
// their tool marks as needing one, whatever else allows them and in every
// permission mode.
type Confirm struct{}

var _ Gate = Confirm{}

// Name returns "confirm".
func (Confirm) Name() string { return NameConfirm }

// Check asks for irreversible tools and for calls their tool says need a
// yes (tool.Confirmer).
func (Confirm) Check(ctx context.Context, c *Call) Verdict {
	if c.Tool == nil {
		return Verdict{Decision: Allow, Gate: NameConfirm}
	}
	if c.Effect(ctx) == tool.Irreversible {
		why := fmt.Sprintf("%s is classed irreversible: a human must say yes", c.Name)
		if c.Tool.Spec().Effect != tool.Irreversible {
			why = fmt.Sprintf("this %s call is classed irreversible: a human must say yes", c.Name)
		}
		return Verdict{Decision: Ask, Gate: NameConfirm, Reason: why}
	}
	if cf, ok := c.Tool.(tool.Confirmer); ok {
		if why := cf.Confirm(ctx, c.Args); why != "" {
			return Verdict{Decision: Ask, Gate: NameConfirm, Reason: why}
		}
	}
	return Verdict{Decision: Allow, Gate: NameConfirm}
}
