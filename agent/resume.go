package agent

import (
	"context"

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
