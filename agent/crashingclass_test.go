package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/tool"
)

// crashingTool panics when asked which files it changes, or which effect a
// call has.
type crashingTool struct {
	probe
	inChanges, inEffect bool
}

func (c *crashingTool) Changes(json.RawMessage) ([]string, error) {
	if c.inChanges {
		panic("changes exploded")
	}
	return nil, nil
}

func (c *crashingTool) EffectOf(context.Context, json.RawMessage) (tool.Effect, error) {
	if c.inEffect {
		panic("effect exploded")
	}
	return tool.Reversible, nil
}

// A tool that panics while the loop asks which files it will change, or
// which effect class a call has, takes neither the loop down nor runs
// unjudged: a crash in Changes refuses the call (its files could not be
// saved), a crash in EffectOf classes the call irreversible (the confirm
// gate asks, and with no one to say yes it does not run). The run goes on.
func TestToolCrashesBeforeItRuns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		tool *crashingTool
		want string
	}{
		{"changes", &crashingTool{inChanges: true}, "could not be saved"},
		{"effect", &crashingTool{inEffect: true}, "approval"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.tool.probe = probe{name: "probe", run: func(context.Context) (string, error) { return "ran", nil }}
			res := fixture{model: script(t, twoCalls), tools: []tool.Tool{c.tool}, approver: approve.Deny{}, snaps: &snapper{}}.loop(t).Run(t.Context(), "task")
			if res.Stop != agent.StopDone || c.tool.Runs() != 0 {
				t.Fatalf("stop %s (%v) after %d runs: want done, none run", res.Stop, res.Err, c.tool.Runs())
			}
			r := lastResult(res.Messages)
			if !r.Refused || !strings.Contains(r.Content, c.want) {
				t.Fatalf("result %+v, want a refusal containing %q", r, c.want)
			}
		})
	}
}
