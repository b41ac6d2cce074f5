package harness_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/gate/scope"
	"github.com/reinhq/rein/gate/shell"
	"github.com/reinhq/rein/tool"
)

type modeArgs struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
}

// modeTool is read-only as a whole (its spec) but writes when a call says
// mode "write" (tool.Effector).
type modeTool struct{ *tool.Func[modeArgs] }

func (modeTool) EffectOf(_ context.Context, args json.RawMessage) (tool.Effect, error) {
	var a modeArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return tool.Irreversible, err
	}
	if a.Mode == "write" {
		return tool.Reversible, nil
	}
	return tool.ReadOnly, nil
}

// The gates judge a call by its own effect class, not its tool's spec: a
// tool whose spec says read-only but whose call writes is refused in plan
// mode, and its write to a protected path asks, like any write; the same
// tool's read runs.
func TestGatesReadTheCallsEffect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mt := modeTool{tool.New(tool.Spec{Name: "file", Effect: tool.ReadOnly,
		Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"mode":{"type":"string"}},"additionalProperties":false}`),
		Roles:  map[string]tool.Role{"path": tool.RolePath}},
		func(context.Context, modeArgs) (string, error) { return "", nil })}
	plan, err := permission.NewGate(permission.Plan, nil, shell.Options{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scope.NewGate(dir)
	if err != nil {
		t.Fatal(err)
	}
	write := &gate.Call{Name: "file", Args: json.RawMessage(`{"path":".git/hooks/pre-commit","mode":"write"}`), Tool: mt}
	if v := plan.Check(t.Context(), write); v.Decision != gate.Deny {
		t.Errorf("plan mode on a call that writes: %+v, want deny", v)
	}
	if v := sc.Check(t.Context(), write); v.Decision == gate.Allow {
		t.Errorf("scope on a write to a protected path: %+v, want ask", v)
	}
	read := &gate.Call{Name: "file", Args: json.RawMessage(`{"path":"notes.txt","mode":"read"}`), Tool: mt}
	if v := plan.Check(t.Context(), read); v.Decision != gate.Allow {
		t.Errorf("plan mode on a read: %+v, want allow", v)
	}
	if v := sc.Check(t.Context(), read); v.Decision != gate.Allow {
		t.Errorf("scope on a read inside the work dir: %+v", v)
	}
}
