// Package scripted is a model that plays a script: a fixed list of turns, each
// with text and tool calls. It understands nothing, which is the point: a
// scenario fails exactly the way its script says, offline, with no key, and
// the same way every time. What is tested is the harness, not a model.
//
// The script format is a contract (docs/script-format.md):
//
//	{"turns":[{"text":"…","calls":[{"tool":"read_file","args":{…}}],"usage":{"input":N,"output":N}}, …]}
//
// calls and usage are optional. After the last turn the model keeps answering
// with that turn's text and no calls. Without usage, tokens are estimated from
// the characters of the whole request (model.EstimateTokens).
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"sync"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/jsonx"
)

// Script is a parsed script file.
type Script struct {
	Turns []Turn `json:"turns"`
}

// Turn is one response of the scripted model.
type Turn struct {
	Text string `json:"text"`
	// Contract, when set, is a task contract the model states in this
	// turn (docs/contract.md): Parse makes it the turn's first call, to
	// ProposeContract with the contract as its arguments.
	Contract json.RawMessage `json:"contract,omitempty"`
	Calls    []Call          `json:"calls,omitempty"`
	Usage    *Usage          `json:"usage,omitempty"`
}

// ProposeContract is the tool a turn's contract is proposed with
// (gate/contract.ToolName; a provider imports nothing of rein's outside
// model, so the name is written here too).
const ProposeContract = "propose_contract"

// Call is a tool call in a turn. Args is a JSON object. ArgsRaw, instead,
// is sent to the harness verbatim as the model's argument text, so a script
// can play a model that writes malformed JSON.
type Call struct {
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args,omitempty"`
	ArgsRaw *string         `json:"args_raw,omitempty"`
}

// Usage is the token count a turn reports instead of the estimate.
type Usage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// ErrScript marks a script that cannot be played.
var ErrScript = errors.New("invalid script")

// Parse reads a script, strictly: unknown fields, a script without turns, a
// call without a tool and arguments that are not an object are errors.
func Parse(data []byte) (*Script, error) {
	var s Script
	if err := jsonx.DecodeStrict(data, &s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrScript, err)
	}
	if len(s.Turns) == 0 {
		return nil, fmt.Errorf(`%w: it has no turns; write {"turns":[{"text":"…"}]}`, ErrScript)
	}
	for i := range s.Turns {
		t := &s.Turns[i]
		if t.Contract != nil {
			if !jsonx.IsObject(t.Contract) {
				return nil, fmt.Errorf(`%w: turn %d: "contract" must be a JSON object like {"effects":[...]}, not %s`, ErrScript, i+1, jsonx.Kind(t.Contract))
			}
			t.Calls = append([]Call{{Tool: ProposeContract, Args: t.Contract}}, t.Calls...)
		}
	}
	for i, t := range s.Turns {
		for j, c := range t.Calls {
			where := fmt.Sprintf("turn %d, call %d", i+1, j+1)
			switch {
			case c.Tool == "":
				return nil, fmt.Errorf(`%w: %s has no "tool"; name the tool to call`, ErrScript, where)
			case c.ArgsRaw != nil && c.Args != nil:
				return nil, fmt.Errorf(`%w: %s (%s) has both "args" and "args_raw"; keep one`, ErrScript, where, c.Tool)
			case c.Args != nil && !jsonx.IsObject(c.Args):
				return nil, fmt.Errorf(`%w: %s (%s): "args" must be a JSON object, not %s`, ErrScript, where, c.Tool, jsonx.Kind(c.Args))
			}
		}
		if t.Usage != nil && (t.Usage.Input < 0 || t.Usage.Output < 0) {
			return nil, fmt.Errorf("%w: turn %d: usage cannot be negative", ErrScript, i+1)
		}
	}
	return &s, nil
}

// Load reads and parses a script file.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("script %s does not exist: check the path (a script is a JSON file, see docs/script-format.md): %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return s, nil
}

// Tools returns the distinct tool names the script calls, sorted.
func (s *Script) Tools() []string {
	seen := map[string]bool{}
	var names []string
	for _, t := range s.Turns {
		for _, c := range t.Calls {
			if !seen[c.Tool] {
				seen[c.Tool] = true
				names = append(names, c.Tool)
			}
		}
	}
	sort.Strings(names)
	return names
}

// CheckTools returns an error naming the first tool the script calls that
// known does not recognise. A script that calls a tool rein does not have is
// almost always a typo, so it is refused before the run starts.
func (s *Script) CheckTools(known func(name string) bool) error {
	for i, t := range s.Turns {
		for j, c := range t.Calls {
			if !known(c.Tool) {
				return fmt.Errorf("%w: turn %d, call %d calls unknown tool %q", ErrScript, i+1, j+1, c.Tool)
			}
		}
	}
	return nil
}

// Model plays a Script. It is safe for concurrent use, though a conversation
// is sequential by nature.
type Model struct {
	name   string
	script *Script

	mu   sync.Mutex
	next int
	est  model.Estimator // the input estimate, counting only what each request adds
}

var _ model.Model = (*Model)(nil)

// New returns a model that plays s from its first turn. name identifies it in
// traces and the audit log ("scripted:PATH" by convention).
func New(name string, s *Script) *Model { return &Model{name: name, script: s} }

// Skip moves the script on by n turns, as if n calls had been made: a
// resumed session continues where the interrupted one stopped.
func (m *Model) Skip(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next = min(m.next+max(n, 0), len(m.script.Turns))
}

// Name returns the model's name.
func (m *Model) Name() string { return m.name }

// Generate returns the next turn of the script.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	i := m.next
	if m.next < len(m.script.Turns) {
		m.next++
	}
	m.mu.Unlock()

	last := i >= len(m.script.Turns)
	if last {
		i = len(m.script.Turns) - 1
	}
	turn := m.script.Turns[i]

	resp := &model.Response{StopReason: model.StopEndTurn}
	if turn.Text != "" {
		resp.Blocks = append(resp.Blocks, model.TextBlock(turn.Text))
	}
	if !last {
		for j, c := range turn.Calls {
			args := bytes.Clone(c.Args) // the caller may keep or change it; the script stays as written
			switch {
			case c.ArgsRaw != nil:
				args = json.RawMessage(*c.ArgsRaw)
			case args == nil:
				args = json.RawMessage(`{}`)
			}
			resp.Blocks = append(resp.Blocks, model.CallBlock(model.ToolCall{
				ID:   fmt.Sprintf("call_%d_%d", i+1, j+1),
				Name: c.Tool,
				Args: args,
			}))
			resp.StopReason = model.StopToolUse
		}
	}
	if turn.Usage != nil {
		resp.Usage = model.Usage{Input: turn.Usage.Input, Output: turn.Usage.Output}
	} else {
		m.mu.Lock()
		in := m.est.Estimate(req)
		m.mu.Unlock()
		resp.Usage = model.Usage{Input: in, Output: model.EstimateOutputTokens(resp.Blocks)}
	}
	return resp, nil
}
