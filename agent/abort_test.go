package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

func (l *memLog) find(typ audit.Type) []audit.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []audit.Record
	for _, r := range l.recs {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// An abort while a tool runs: the tool's context is cancelled, the abort
// record names the reason and the call in flight, and the run stops aborted.
func TestWithAbortDuringTool(t *testing.T) {
	t.Parallel()
	ctx, abort := agent.WithAbort(t.Context())
	p := &probe{name: "probe", effect: tool.Reversible, run: func(ctx context.Context) (string, error) {
		abort("SIGINT from the user")
		<-ctx.Done()
		return "", ctx.Err()
	}}
	log := &memLog{}
	res := fixture{model: script(t, twoCalls), tools: []tool.Tool{p}, log: log, session: "s1"}.loop(t).Run(ctx, "task")
	if res.Stop != agent.StopAborted || !errors.Is(res.Err, agent.ErrAborted) || p.Runs() != 1 {
		t.Fatalf("stop %s (%v) after %d runs", res.Stop, res.Err, p.Runs())
	}
	ab := log.find(audit.Abort)
	if len(ab) != 1 || !strings.Contains(ab[0].Reason, "SIGINT from the user") || ab[0].Tool != "probe" || ab[0].CallID != "call_1_1" || ab[0].Key == "" {
		t.Fatalf("abort records %+v", ab)
	}
	intents := log.find(audit.Intent)
	if len(intents) != 1 || intents[0].Key != ab[0].Key || !intents[0].Effect.Is(tool.Reversible) {
		t.Fatalf("intent %+v", intents)
	}
}

// blocking is a model that waits for its context.
type blocking struct{ started chan struct{} }

func (b blocking) Generate(ctx context.Context, _ *model.Request) (*model.Response, error) {
	close(b.started)
	<-ctx.Done()
	return nil, context.Cause(ctx)
}

func TestAbortDuringModelCall(t *testing.T) {
	t.Parallel()
	ctx, abort := agent.WithAbort(t.Context())
	m := blocking{started: make(chan struct{})}
	go func() { <-m.started; abort("kill switch") }()
	log := &memLog{}
	res := fixture{model: m, tools: []tool.Tool{&probe{name: "probe"}}, log: log}.loop(t).Run(ctx, "task")
	if res.Stop != agent.StopAborted {
		t.Fatalf("stop %s (%v)", res.Stop, res.Err)
	}
	ab := log.find(audit.Abort)
	if len(ab) != 1 || ab[0].Tool != "(model call)" || ab[0].Step != 1 || !strings.Contains(ab[0].Reason, "kill switch") {
		t.Fatalf("abort records %+v", ab)
	}
	if got := strings.Join(log.types(), " "); got != "session_start abort stop" {
		t.Fatalf("records %s", got)
	}
}

// hookLog calls after on every record written.
type hookLog struct {
	*memLog
	after func(audit.Record)
}

func (h hookLog) Write(r audit.Record) error {
	err := h.memLog.Write(r)
	h.after(r)
	return err
}

// An abort between two calls of one response, after the first one's result
// is recorded: the second never runs, and nothing is in flight.
func TestAbortBetweenCalls(t *testing.T) {
	t.Parallel()
	ctx, abort := agent.WithAbort(t.Context())
	q := &probe{name: "probe", run: func(context.Context) (string, error) { return "ok", nil }}
	log := &memLog{}
	reg, err := tool.NewRegistry(q)
	if err != nil {
		t.Fatal(err)
	}
	l, err := agent.New(agent.Config{
		Model: script(t, `{"turns":[{"text":"a","calls":[{"tool":"probe"},{"tool":"probe"}]},{"text":"end"}]}`),
		Tools: reg, Gates: gate.NewPipeline(nil, gate.NewAvailability(reg.Names()), gate.Validation{}),
		Audit: hookLog{log, func(r audit.Record) {
			if r.Type == audit.Result {
				abort("between calls")
			}
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := l.Run(ctx, "task")
	if res.Stop != agent.StopAborted || q.Runs() != 1 {
		t.Fatalf("stop %s after %d runs: the second call must not run", res.Stop, q.Runs())
	}
	if ab := log.find(audit.Abort); len(ab) != 1 || ab[0].Tool != "" {
		t.Fatalf("between calls nothing is in flight: %+v", ab)
	}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	k := agent.IdempotencyKey("s", "call_1_1", "send_email", json.RawMessage(`{"to":"a"}`))
	for _, other := range []string{
		agent.IdempotencyKey("s2", "call_1_1", "send_email", json.RawMessage(`{"to":"a"}`)),
		agent.IdempotencyKey("s", "call_1_2", "send_email", json.RawMessage(`{"to":"a"}`)),
		agent.IdempotencyKey("s", "call_1_1", "send_emai", json.RawMessage(`l{"to":"a"}`)),
		agent.IdempotencyKey("s", "call_1_1", "send_email", json.RawMessage(`{"to":"b"}`)),
	} {
		if other == k {
			t.Fatal("different calls share a key")
		}
	}
	if k != agent.IdempotencyKey("s", "call_1_1", "send_email", json.RawMessage(`{"to":"a"}`)) || len(k) != 24 {
		t.Fatalf("key %q is not stable", k)
	}
}

type changer struct {
	*probe
	paths []string
}

func (c changer) Changes(json.RawMessage) ([]string, error) { return c.paths, nil }

type snapper struct {
	mu   sync.Mutex
	seen []string
	fail bool
}

func (s *snapper) Snapshot(rel string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return "", errors.New("disk full")
	}
	s.seen = append(s.seen, rel)
	return "snap-" + rel, nil
}

// Files are saved before the tool runs, and the ids are in the intent; a
// call whose files cannot be saved does not run.
func TestSnapshotsBeforeTheEffect(t *testing.T) {
	t.Parallel()
	for _, fail := range []bool{false, true} {
		p := &probe{name: "probe", effect: tool.Reversible}
		sn := &snapper{fail: fail}
		log := &memLog{}
		res := fixture{model: script(t, `{"turns":[{"text":"a","calls":[{"tool":"probe"}]},{"text":"end"}]}`),
			tools: []tool.Tool{changer{p, []string{"a.txt", "d/b.txt"}}}, log: log, snaps: sn}.loop(t).Run(t.Context(), "task")
		if res.Stop != agent.StopDone {
			t.Fatalf("stop %s", res.Stop)
		}
		intents := log.find(audit.Intent)
		if fail {
			if p.Runs() != 0 || len(intents) != 0 || !strings.Contains(log.find(audit.Result)[0].Content, "could not be saved for rollback") {
				t.Fatalf("fail: runs %d intents %+v", p.Runs(), intents)
			}
			continue
		}
		if p.Runs() != 1 || len(intents) != 1 || strings.Join(intents[0].Snapshots, ",") != "snap-a.txt,snap-d/b.txt" {
			t.Fatalf("runs %d intents %+v", p.Runs(), intents)
		}
	}
}

type stopModel struct{ reason string }

func (m stopModel) Generate(context.Context, *model.Request) (*model.Response, error) {
	return &model.Response{Blocks: []model.Block{model.TextBlock("partial answ")}, StopReason: m.reason}, nil
}

// A response that ends for another reason than the end of the turn stops
// the task with the reason in the answer.
func TestStopReasonInTheAnswer(t *testing.T) {
	t.Parallel()
	for reason, want := range map[string]string{
		model.StopEndTurn: "partial answ", model.StopMaxTokens: "partial answ\n\n[the model stopped: max_tokens]",
		model.StopRefusal: "partial answ\n\n[the model stopped: refusal]", "pause_turn": "partial answ\n\n[the model stopped: pause_turn]",
	} {
		res := fixture{model: stopModel{reason}, tools: []tool.Tool{&probe{name: "probe"}}}.loop(t).Run(t.Context(), "task")
		if res.Stop != agent.StopDone || res.Answer != want {
			t.Errorf("%s: stop %s answer %q", reason, res.Stop, res.Answer)
		}
	}
}
