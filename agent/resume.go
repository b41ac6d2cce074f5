package agent

import (
	"context"
	"strings"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/model"
)

// State is where an interrupted session stood, as its audit log tells it.
type State struct {
	// Messages is the conversation so far, starting with the task. When
	// the last message is the assistant's and asked for tools, Settled and
	// Pending together answer each of its calls.
	Messages []model.Message
	// Used is what the interrupted session spent; the limits count on.
	Used budget.Used
	// Settled are results already known for the last assistant message's
	// calls (from the log, or from a human who said what happened).
	Settled []model.ToolResult
	// Pending are calls of that message to run now, through the gates, in
	// order, before the next model call. A call whose effect is unknown
	// and irreversible must never be here without a human's word.
	Pending []*model.ToolCall
	// Note is recorded in the resume record: how the unfinished calls were
	// settled.
	Note string
}

// Resume continues an interrupted session from st under this loop's
// configuration: a resume record, the pending calls, then model calls until
// a stop. The audit log should be the interrupted session's own, continued.
func (l *Loop) Resume(ctx context.Context, st State) Result {
	if l.cfg.Limits.MaxWall > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, l.cfg.Limits.MaxWall, ErrWallTime)
		defer cancel()
	}
	r := &run{
		l:     l,
		ctx:   ctx,
		meter: budget.NewMeterFrom(l.cfg.Limits, st.Used),
		msgs:  append([]model.Message(nil), st.Messages...),
		res:   Result{Refusals: map[string]int{}},
	}
	r.replay(st)
	stop := r.record(audit.Record{Type: audit.Resume, Reason: st.Note, Steps: st.Used.Steps, ToolCalls: st.Used.ToolCalls})
	if stop == nil && (len(st.Settled) > 0 || len(st.Pending) > 0) {
		results := make([]model.Block, 0, len(st.Settled)+len(st.Pending))
		for _, s := range st.Settled {
			results = append(results, model.ResultBlock(s))
		}
		step := st.Used.Steps
		for _, c := range st.Pending {
			res, s := r.call(step, c)
			if s != nil {
				stop = s
				break
			}
			results = append(results, model.ResultBlock(res))
		}
		if stop == nil {
			r.msgs = append(r.msgs, model.Message{Role: model.RoleUser, Blocks: results})
		}
	}
	for stop == nil {
		stop = r.step()
	}
	return r.finish(stop)
}

// replay tells the Provenance what entered the context before: the task
// and the user's later messages (a user message that starts with text) as
// trusted, every tool result that is not a refusal as untrusted. A
// conversation's next turn (a Resume with the user's new message last)
// makes that message trusted this way.
func (r *run) replay(st State) {
	p := r.l.cfg.Provenance
	if p == nil {
		return
	}
	for _, m := range st.Messages {
		for i, b := range m.Blocks {
			switch {
			case i == 0 && m.Role == model.RoleUser && b.Kind == model.KindText:
				// The task, or a later message of the user's. Other text
				// blocks (a compaction's summary) are rein's, not the user's.
				p.Trusted(b.Text)
			case b.Kind == model.KindToolCall && b.Call != nil:
				t, _ := r.l.cfg.Tools.Lookup(b.Call.Name)
				noteArgs(p, t, b.Call.Args)
			case b.Kind == model.KindToolResult && b.Result != nil && !strings.HasPrefix(b.Result.Content, refusedPrefix):
				t, _ := r.l.cfg.Tools.Lookup(b.Result.Name)
				noteResult(p, t, b.Result.Name, b.Result.Content)
			}
		}
	}
	for _, s := range st.Settled {
		if !strings.HasPrefix(s.Content, refusedPrefix) {
			t, _ := r.l.cfg.Tools.Lookup(s.Name)
			noteResult(p, t, s.Name, s.Content)
		}
	}
}
