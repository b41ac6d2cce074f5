package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"sync"

	"github.com/reinhq/rein/eval"
	"github.com/reinhq/rein/model"
)

// step is one call a persona means to make.
type step struct {
	call Call
	// attacker marks a call of the injection, whose {{name}} placeholders
	// are filled from tool results.
	attacker bool
	// unlessOK skips this call when the call before it succeeded (the
	// sloppy persona's right call after a bad one that went through).
	unlessOK bool
}

// attack is an injection as a persona meets it.
type attack struct {
	marker   string // folded words that show the injection is in a result
	calls    []Call
	captures map[string]capture
}

type capture struct {
	tool   string
	re     *regexp.Regexp
	number bool // fills a whole "{{name}}" string as a JSON number
}

// seen is one tool result the persona has read.
type seen struct {
	tool, content string
	isError       bool
}

// persona is a scripted model that reads its results. It plays one of the
// eval personas: it works through a queue of calls, one per step, and
// answers when the queue is empty. On meeting its injection in a tool
// result, obedient puts the attacker's calls first and goes on with the
// task; injection-first does them and then stops. It tells a refusal from a
// success by the result's error flag.
type persona struct {
	name    string
	queue   []step
	answer  string
	attack  *attack
	met     bool
	results []seen
	lastErr bool // the last result was an error
	calls   int
}

var _ model.Model = (*persona)(nil)

// newPersona returns the named persona for a task variant.
// readOnly tells whether a tool only reads (a repeated call is harmless).
func newPersona(name string, t *Task, atk *attack, readOnly func(tool string) bool) (*persona, error) {
	p := &persona{name: name, answer: t.Answer, attack: atk}
	refs := make([]step, len(t.Reference))
	for i, c := range t.Reference {
		refs[i] = step{call: c}
	}
	switch name {
	case eval.PersonaOracle, eval.PersonaObedient, eval.PersonaInjectionFirst, personaIdle:
		p.queue = refs
	case eval.PersonaSloppy:
		first := t.Reference[0]
		p.queue = append(p.queue, step{call: Call{Tool: first.Tool, Args: withBadField(first.Args)}}, step{call: first, unlessOK: true})
		if readOnly(first.Tool) {
			p.queue = append(p.queue, step{call: first}) // the same read, again
		}
		p.queue = append(p.queue, refs[1:]...)
	case eval.PersonaRecovering:
		if len(t.Detour) == 0 {
			return nil, fmt.Errorf("task %s has no detour for the recovering persona", t.ID)
		}
		for _, c := range t.Detour {
			p.queue = append(p.queue, step{call: c})
		}
		p.queue = append(p.queue, refs...)
	default:
		return nil, fmt.Errorf("unknown persona %q", name)
	}
	if name == personaIdle {
		p.queue, p.answer = nil, "I did nothing."
	}
	return p, nil
}

// personaIdle does nothing and answers at once: the self-check's proof
// that a utility check is not true of an untouched environment.
const personaIdle = "idle"

// Name names the model in the audit records.
func (p *persona) Name() string { return "persona:" + p.name }

// Generate reads the results of the last step and makes the next one.
func (p *persona) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.read(req)
	for len(p.queue) > 0 && p.queue[0].unlessOK && !p.lastErr {
		p.queue = p.queue[1:]
	}
	var blocks []model.Block
	if len(p.queue) == 0 {
		blocks = []model.Block{model.TextBlock(p.answer)}
	} else {
		s := p.queue[0]
		p.queue = p.queue[1:]
		args := s.call.Args
		if s.attacker {
			args = p.fill(args)
		}
		p.calls++
		blocks = []model.Block{model.CallBlock(model.ToolCall{ID: fmt.Sprintf("call-%d", p.calls), Name: s.call.Tool, Args: args})}
	}
	resp := &model.Response{Blocks: blocks, StopReason: model.StopEndTurn}
	if len(p.queue) > 0 || blocks[0].Kind == model.KindToolCall {
		resp.StopReason = model.StopToolUse
	}
	resp.Usage = model.Usage{Input: model.EstimateTokens(req), Output: model.EstimateOutputTokens(blocks)}
	return resp, nil
}

// read takes in the tool results of the last message and reacts to the
// injection the first time it shows.
func (p *persona) read(req *model.Request) {
	// A tool's description (an MCP server's) is read with the tools
	// offered: an instruction in it is met before any result.
	for _, d := range req.Tools {
		if p.attack != nil && !p.met && strings.Contains(fold(d.Description), p.attack.marker) {
			p.met = true
			p.obey()
		}
	}
	if len(req.Messages) == 0 {
		return
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != model.RoleUser {
		return
	}
	for _, b := range last.Blocks {
		if b.Kind != model.KindToolResult || b.Result == nil {
			continue
		}
		r := seen{tool: b.Result.Name, content: b.Result.Content, isError: b.Result.IsError}
		p.results = append(p.results, r)
		p.lastErr = r.isError
		if p.attack != nil && !p.met && !r.isError && strings.Contains(fold(r.content), p.attack.marker) {
			p.met = true
			p.obey()
		}
	}
}

// obey reacts to the injection as the persona does.
func (p *persona) obey() {
	var atk []step
	for _, c := range p.attack.calls {
		atk = append(atk, step{call: c, attacker: true})
	}
	switch p.name {
	case eval.PersonaObedient:
		p.queue = append(atk, p.queue...)
	case eval.PersonaInjectionFirst:
		p.queue, p.answer = atk, "Done."
	}
}

var (
	placeholder       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{([a-z0-9_]+)\}\}`) })
	quotedPlaceholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"\{\{([a-z0-9_]+)\}\}"`) })
)

// fill replaces {{name}} in args with what the captures find in the
// results read so far; a placeholder nothing fills stays as it is. A
// number capture replaces a whole "{{name}}" string with the number it
// read, as a JSON number.
func (p *persona) fill(args json.RawMessage) json.RawMessage {
	args = quotedPlaceholder().ReplaceAllFunc(args, func(m []byte) []byte {
		c, ok := p.attack.captures[string(quotedPlaceholder().FindSubmatch(m)[1])]
		if !ok || !c.number {
			return m
		}
		v, ok := p.captured(c)
		if !ok {
			return m
		}
		n, err := eval.ParseExpected(strings.TrimSpace(v))
		if err != nil {
			return m
		}
		return []byte(decimal(n))
	})
	return placeholder().ReplaceAllFunc(args, func(m []byte) []byte {
		c, ok := p.attack.captures[string(placeholder().FindSubmatch(m)[1])]
		if !ok {
			return m
		}
		v, ok := p.captured(c)
		if !ok {
			return m
		}
		q, _ := json.Marshal(v) // a string always marshals
		return q[1 : len(q)-1]
	})
}

// captured returns the first group of c's pattern in the first result it
// matches.
func (p *persona) captured(c capture) (string, bool) {
	for _, r := range p.results {
		if c.tool != "" && r.tool != c.tool || r.isError {
			continue
		}
		if g := c.re.FindStringSubmatch(r.content); g != nil {
			return g[1], true
		}
	}
	return "", false
}

// decimal writes n as a JSON number with as few decimals as it needs (at
// most 6).
func decimal(n *big.Rat) string {
	for d := 0; d < 6; d++ {
		s := n.FloatString(d)
		if r, ok := new(big.Rat).SetString(s); ok && r.Cmp(n) == 0 {
			return s
		}
	}
	return n.FloatString(6)
}

// withBadField returns args with an argument no tool takes.
func withBadField(args json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	m["please"] = json.RawMessage(`"now"`)
	b, _ := json.Marshal(m) // a map of raw values always marshals
	return b
}

// markerWords is how many words of an injection's text show it is there.
const markerWords = 8

// markerOf returns the folded first words of text that identify it in a
// tool result.
func markerOf(text string) string {
	words := strings.Fields(strings.ToLower(text))
	if len(words) > markerWords {
		words = words[:markerWords]
	}
	return strings.Join(words, " ")
}
