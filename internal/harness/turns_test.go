package harness_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
)

// A per-turn cap ends the turn, not the conversation: the next message
// gets the step cap afresh, and the model is told the turn was cut short.
func TestStepCapEndsOnlyTheTurn(t *testing.T) {
	t.Parallel()
	m := &recording{Model: model(t, `{"turns":[
	 {"text":"a","calls":[{"tool":"calc","args":{"expression":"1+1"}}]},
	 {"text":"b","calls":[{"tool":"calc","args":{"expression":"2+2"}}]},
	 {"text":"c"}]}`)}
	var stops []agent.StopReason
	out, err := harness.Run(t.Context(), harness.Spec{
		Task: "first", Model: m, WorkDir: t.TempDir(), NoRollback: true, AuditDir: t.TempDir(),
		Policy: harness.Policy{Allowed: []string{"calc"}, Mode: permission.Default},
		Limits: budget.Limits{MaxSteps: 2},
		Next: func(_ context.Context, res agent.Result) (string, bool) {
			stops = append(stops, res.Stop)
			return "go on", len(stops) < 2
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(stops) != "[max_steps done]" || out.Stop != agent.StopDone || out.Answer != "c" || out.Steps != 3 {
		t.Fatalf("turns ended %v; session %s %q after %d steps", stops, out.Stop, out.Answer, out.Steps)
	}
	if last := m.reqs[len(m.reqs)-1]; !strings.Contains(last, "the previous turn ended before it was finished (max_steps") {
		t.Fatalf("the model was not told the turn was cut short:\n%s", last)
	}
}

// Cancelling a turn's context aborts that turn only: the abort record
// says which turn, a call of the cut step keeps the answer the log has
// (the refusal of the approval the Ctrl-C cut short), a call that never
// reached its verdict is not in the conversation (the log has no
// arguments for it: a resumed conversation could not have it), and the
// next turn runs.
func TestCancelledTurnKeepsTheConversation(t *testing.T) {
	t.Parallel()
	m := &recording{Model: model(t, `{"turns":[
	 {"text":"a","calls":[{"tool":"write_file","args":{"path":"x.txt","content":"x"}},{"tool":"write_file","args":{"path":"y.txt","content":"y"}}]},
	 {"text":"b"}]}`)}
	var abortTurn func(string)
	approver := approve.Func(func(ctx context.Context, _ approve.Request) (bool, error) {
		abortTurn("the user pressed Ctrl-C in turn 1") // the human cancels at the prompt
		<-ctx.Done()
		return false, ctx.Err()
	})
	audit := t.TempDir()
	var stops []agent.StopReason
	out, err := harness.Run(t.Context(), harness.Spec{
		Task: "first", Model: m, WorkDir: t.TempDir(), NoRollback: true, AuditDir: audit,
		Policy: harness.Policy{Allowed: []string{"write_file"}, Mode: permission.Default, Approver: approver},
		TurnContext: func(ctx context.Context, turn int) (context.Context, context.CancelFunc) {
			ctx, abort := agent.WithAbort(ctx)
			abortTurn = abort
			return ctx, func() { abort("turn over") }
		},
		Next: func(_ context.Context, res agent.Result) (string, bool) {
			stops = append(stops, res.Stop)
			return "never mind", len(stops) < 2
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(stops) != "[aborted done]" || out.Stop != agent.StopDone || out.Answer != "b" {
		t.Fatalf("turns ended %v; session %s %q", stops, out.Stop, out.Answer)
	}
	last := m.reqs[len(m.reqs)-1]
	refused := `"call_id":"call_1_1","name":"write_file","content":"Refused: write_file needs a human's approval`
	if !strings.Contains(last, refused) || strings.Contains(last, "call_1_2") || !strings.Contains(last, "never mind") {
		t.Fatalf("the calls of the cancelled turn are not answered as the log knows them in the next request:\n%s", last)
	}
	logs, _ := filepath.Glob(filepath.Join(audit, "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	data, _ := os.ReadFile(logs[0])
	if !strings.Contains(string(data), `"type":"abort"`) || !strings.Contains(string(data), "Ctrl-C in turn 1") {
		t.Fatalf("the abort record does not say which turn:\n%s", data)
	}
}

// Which stops end only the turn and which end the conversation.
func TestTurnEnded(t *testing.T) {
	t.Parallel()
	done, cancel := context.WithCancel(t.Context())
	cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		res  agent.Result
		want bool
	}{
		{"done", t.Context(), agent.Result{Stop: agent.StopDone}, false},
		{"turn cancelled", t.Context(), agent.Result{Stop: agent.StopAborted}, false},
		{"session cancelled", done, agent.Result{Stop: agent.StopDone}, true},
		{"step cap", t.Context(), agent.Result{Stop: agent.StopMaxSteps}, false},
		{"turn wall time", t.Context(), agent.Result{Stop: agent.StopTimeout}, false},
		{"tool-call cap", t.Context(), agent.Result{Stop: agent.StopBudget, Err: &budget.ExceededError{Limit: budget.ToolCalls}}, false},
		{"token cap", t.Context(), agent.Result{Stop: agent.StopBudget, Err: &budget.ExceededError{Limit: budget.Tokens}}, true},
		{"cost cap", t.Context(), agent.Result{Stop: agent.StopBudget, Err: &budget.ExceededError{Limit: budget.Cost}}, true},
		{"model error", t.Context(), agent.Result{Stop: agent.StopError, Err: fmt.Errorf("%w at step 1: 401", agent.ErrModelCall)}, false},
		{"log error", t.Context(), agent.Result{Stop: agent.StopError, Err: errors.New("write audit: disk full")}, true},
	} {
		if got := harness.TurnEnded(c.ctx, c.res); got != c.want {
			t.Errorf("%s: TurnEnded %v, want %v", c.name, got, c.want)
		}
	}
}
