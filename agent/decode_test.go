package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

type pathArgs struct {
	Path string `json:"path"`
}

// witnessTool is a typed tool that records the value it is run with and
// whether it was ever handed raw arguments to decode itself.
type witnessTool struct {
	*tool.Func[pathArgs]
	mu   sync.Mutex
	ran  []*pathArgs
	raw  int
	seen []string // the path each run received
}

func newWitnessTool() *witnessTool {
	w := &witnessTool{}
	w.Func = tool.New(tool.Spec{Name: "write", Effect: tool.Reversible, Roles: map[string]tool.Role{"path": tool.RolePath},
		Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
		func(_ context.Context, a pathArgs) (string, error) {
			w.mu.Lock()
			w.seen = append(w.seen, a.Path)
			w.mu.Unlock()
			return "wrote " + a.Path, nil
		})
	return w
}

func (w *witnessTool) RunDecoded(ctx context.Context, decoded any) (string, model.Source, error) {
	w.mu.Lock()
	p, _ := decoded.(*pathArgs)
	w.ran = append(w.ran, p)
	w.mu.Unlock()
	return w.Func.RunDecoded(ctx, decoded)
}

func (w *witnessTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	w.mu.Lock()
	w.raw++
	w.mu.Unlock()
	return w.Func.Run(ctx, args)
}

// judge is a gate that records what it judged: the decoded value and the
// path as the gates' view shows it.
type judge struct {
	mu      sync.Mutex
	decoded []*pathArgs
	paths   []string
}

func (*judge) Name() string { return "judge" }
func (j *judge) Check(_ context.Context, c *gate.Call) gate.Verdict {
	d, err := c.Decoded()
	if err != nil {
		return gate.Verdict{Decision: gate.Deny, Gate: "judge", Reason: err.Error()}
	}
	p, _ := c.Str("path")
	j.mu.Lock()
	j.decoded = append(j.decoded, d.(*pathArgs))
	j.paths = append(j.paths, p)
	j.mu.Unlock()
	return gate.Verdict{Decision: gate.Allow, Gate: "judge"}
}

// TestToolRunsWhatTheGatesJudged: the loop hands the tool the very value
// the gates decoded and judged (the same pointer), never a second decode of
// the raw bytes; arguments that decode to something else than they look
// (escapes, a repeated key, a NUL, an invisible character) are judged on
// exactly what runs, and what does not decode does not run, with or without
// a validation gate.
func TestToolRunsWhatTheGatesJudged(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		args       string
		validation bool
		runs       string // the path the tool runs with; "" means it must not run
	}{
		{"plain", `{"path":"a.txt"}`, true, "a.txt"},
		{"JSON escapes", `{"path":"\u002e\u002e/x"}`, true, "../x"},
		{"trailing NUL", `{"path":"a.txt\u0000"}`, true, "a.txt\x00"},
		{"invisible character", `{"path":".git\u200b/config"}`, true, ".git\u200b/config"},
		{"duplicate key", `{"path":"a","path":"../x"}`, true, ""},
		{"duplicate key, no validation gate", `{"path":"a","path":"../x"}`, false, ""},
		{"plain, no validation gate", `{"path":"a.txt"}`, false, "a.txt"},
		{"unknown field, no validation gate", `{"path":"a.txt","mode":"0777"}`, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWitnessTool()
			j := &judge{}
			reg, err := tool.NewRegistry(w)
			if err != nil {
				t.Fatal(err)
			}
			gates := []gate.Gate{gate.NewAvailability(reg.Names())}
			if c.validation {
				gates = append(gates, gate.Validation{})
			}
			gates = append(gates, j)
			raw, _ := json.Marshal(c.args)
			m := script(t, `{"turns":[{"text":"go","calls":[{"tool":"write","args_raw":`+string(raw)+`}]},{"text":"done"}]}`)
			l, err := agent.New(agent.Config{Model: m, Tools: reg, Gates: gate.NewPipeline(nil, gates...)})
			if err != nil {
				t.Fatal(err)
			}
			res := l.Run(t.Context(), "task")
			if res.Stop != agent.StopDone {
				t.Fatalf("stop %s: %v", res.Stop, res.Err)
			}
			if w.raw != 0 {
				t.Fatalf("the tool was handed raw arguments %d times", w.raw)
			}
			if c.runs == "" {
				if len(w.seen) != 0 {
					t.Fatalf("the tool ran with %q", w.seen)
				}
				if r := lastResult(res.Messages); r == nil || !r.IsError || !strings.Contains(r.Content, "twice") && !strings.Contains(r.Content, "mode") {
					t.Fatalf("the model got %+v, want the arguments refused", r)
				}
				return
			}
			if len(w.ran) != 1 || len(j.decoded) != 1 || w.ran[0] != j.decoded[0] {
				t.Fatalf("the tool ran %v, the gate judged %v: want the same value, once", w.ran, j.decoded)
			}
			if w.seen[0] != c.runs || j.paths[0] != c.runs {
				t.Fatalf("the gate judged %q, the tool ran %q, want %q for both", j.paths[0], w.seen[0], c.runs)
			}
		})
	}
}
