package agent

import (
	"context"
	"encoding/json"
	"slices"
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
	// Turn says that this state begins a new turn of a conversation (the
	// user's next message): the step and tool-call caps count this turn's
	// steps and calls only, while the token and cost caps go on counting
	// the whole conversation (budget.Meter.BeginTurn).
	Turn bool
	// TurnBegan, for a conversation resumed in the middle of a later turn
	// (not Turn), is what the conversation had used when that turn began:
	// the step and tool-call caps count that turn's steps and calls only,
	// as they did live. Nil: the whole session is one turn.
	TurnBegan *budget.Used
	// Message is the user's message that begins this turn (with Turn): it
	// is recorded in the resume record (its Task), so that the audit log
	// keeps every message of a conversation and the conversation can be
	// rebuilt from it (NextTurn). Messages already holds it.
	Message string
	// Messages and Settled are always raw, as a run keeps them (see
	// Result.Messages): the task and each tool result as they were before
	// the model read them (redacted, not capped, not wrapped), each result
	// with its source. Every request is built from them as a live step
	// builds it (the task wrapped as the user's input, each result that is
	// not a refusal capped and wrapped by its source).
	//
	// Raw says that they were rebuilt from the audit log, which keeps the
	// whole conversation: Resume then tells the Provenance each text in
	// the order the live run did (each call's arguments just before its
	// result), and compacts the conversation as the live run did, step by
	// step, so that a resumed conversation is the same bytes, and feeds the
	// Provenance the same texts, as the live one. Without Raw, Messages are
	// a run's own (a conversation's next turn, compacted already) and are
	// only told to the Provenance.
	Raw bool
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
		l:      l,
		view:   view{l: l},
		ctx:    ctx,
		meter:  budget.NewMeterFrom(l.cfg.Limits, st.Used),
		msgs:   append([]model.Message(nil), st.Messages...),
		res:    Result{Refusals: map[string]int{}},
		judged: judgedCalls(st),
		args:   callArgs(st),
	}
	switch {
	case st.Turn:
		r.meter.BeginTurn()
	case st.TurnBegan != nil:
		r.meter.BeginTurnFrom(*st.TurnBegan)
	}
	r.l.tellDescriptions() // told again: telling is idempotent
	switch {
	case st.Raw:
		r.tellAll()
		r.msgs = l.recompact(r.msgs)
	case st.Turn:
		r.tellNewWords()
	default:
		r.replay(st)
	}
	stop := r.record(audit.Record{Type: audit.Resume, Reason: st.Note, Task: st.Message, Steps: st.Used.Steps, ToolCalls: st.Used.ToolCalls})
	if stop == nil && (len(st.Settled) > 0 || len(st.Pending) > 0) {
		// The answers, in the order of the calls they answer, as a live
		// step gives them: a settled result admitted, a pending call run
		// (through the gates and the approver). A pending call was counted
		// when the model asked for it: running it again is not another call.
		settled := map[string]model.ToolResult{}
		for _, s := range st.Settled {
			settled[s.CallID] = s
		}
		pending := map[string]*model.ToolCall{}
		for _, c := range st.Pending {
			pending[c.ID] = c
		}
		results := make([]model.Block, 0, len(st.Settled)+len(st.Pending))
		step := st.Used.Steps
		for _, id := range r.answerOrder(st) {
			if res, ok := settled[id]; ok {
				if st.Raw {
					r.noteUpTo(id, true)
					l.tell(res, r.args[id])
				}
				results = append(results, model.ResultBlock(res))
				continue
			}
			if st.Raw {
				r.noteUpTo(id, false)
			}
			res, s := r.call(step, pending[id], false)
			if res.CallID != "" {
				results = append(results, model.ResultBlock(res))
			}
			if s != nil {
				for _, b := range results {
					r.answered = append(r.answered, *b.Result)
				}
				stop = s
				break
			}
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

// UnfinishedCall answers a call whose turn ended before its result was
// recorded (NextTurn).
const UnfinishedCall = "Not known whether this call ran: the turn ended (cancelled by the user, or a limit) before its result was recorded. Check before relying on its effect."

// NextTurn returns the conversation msgs going on with the user's next
// message, text (already wrapped as the user's input).
//
// When the model's last message asked for tools (a turn cut short in the
// middle of a step), each of its calls is answered: by its answer in
// answered (Result.Answered: recorded before the stop), else as not known
// to have run (UnfinishedCall). When the previous turn ended early, ended
// says why ("" when it ended done) and the model is told so before the
// user's words. The user's message joins the last message when that is
// the user's (a turn stopped after its tool results): the roles keep
// alternating.
//
// A live conversation and one rebuilt from its audit log both go through
// here, with the same answers, so they are the same.
func NextTurn(msgs []model.Message, answered []model.ToolResult, ended, text string) []model.Message {
	msgs = slices.Clone(msgs)
	var blocks []model.Block
	if n := len(msgs); n > 0 && msgs[n-1].Role == model.RoleAssistant {
		var calls []*model.ToolCall
		for _, b := range msgs[n-1].Blocks {
			if b.Kind == model.KindToolCall && b.Call != nil {
				calls = append(calls, b.Call)
			}
		}
		known := map[string]model.ToolResult{}
		for _, a := range answered {
			known[a.CallID] = a
		}
		for _, c := range calls {
			res, ok := known[c.ID]
			if !ok {
				// rein's words, not the tool's (Refused): never taken for its output
				res = model.ToolResult{CallID: c.ID, Name: c.Name, IsError: true, Refused: true, Content: UnfinishedCall}
			}
			blocks = append(blocks, model.ResultBlock(res))
		}
	}
	if ended != "" {
		blocks = append(blocks, model.TextBlock(turnNote+" before it was finished ("+ended+"); the user now says:]"))
	}
	blocks = append(blocks, model.TextBlock(text))
	if n := len(msgs); n > 0 && msgs[n-1].Role == model.RoleUser {
		last := msgs[n-1]
		last.Blocks = append(slices.Clone(last.Blocks), blocks...)
		msgs[n-1] = last
	} else {
		msgs = append(msgs, model.Message{Role: model.RoleUser, Blocks: blocks})
	}
	return msgs
}

// answerOrder returns the ids of the settled and pending calls: in the
// order the last assistant message asked for them, then any it does not
// name, settled first.
func (r *run) answerOrder(st State) []string {
	known := map[string]bool{}
	for _, s := range st.Settled {
		known[s.CallID] = true
	}
	for _, c := range st.Pending {
		known[c.ID] = true
	}
	var ids []string
	if n := len(r.msgs); n > 0 && r.msgs[n-1].Role == model.RoleAssistant {
		for _, b := range r.msgs[n-1].Blocks {
			if b.Kind == model.KindToolCall && b.Call != nil && known[b.Call.ID] {
				ids = append(ids, b.Call.ID)
				delete(known, b.Call.ID)
			}
		}
	}
	for _, s := range st.Settled {
		if known[s.CallID] {
			ids = append(ids, s.CallID)
			delete(known, s.CallID)
		}
	}
	for _, c := range st.Pending {
		if known[c.ID] {
			ids = append(ids, c.ID)
			delete(known, c.ID)
		}
	}
	return ids
}

// tellAll tells the Provenance a conversation rebuilt from the audit log
// (State.Raw), message by message, as Run and each call did: the task, and
// each later message of the user's, trusted; each call's arguments before
// its result; each tool result that is not a refusal, capped, untrusted.
func (r *run) tellAll() {
	for i, m := range r.msgs {
		for j, b := range m.Blocks {
			switch {
			case userWords(i, j, m, b):
				r.l.tellTask(b.Text)
			case b.Kind == model.KindToolCall && b.Call != nil:
				r.unnoted = append(r.unnoted, b.Call)
			case b.Kind == model.KindToolResult && b.Result != nil:
				r.noteUpTo(b.Result.CallID, true)
				r.l.tell(*b.Result, r.args[b.Result.CallID])
			}
		}
	}
}

// recompact compacts a whole conversation rebuilt from the audit log as
// the live run compacted it, step by step: before each model call (each
// assistant message), the conversation up to it, as a step does. The
// result is the conversation the live run kept.
func (l *Loop) recompact(msgs []model.Message) []model.Message {
	if l.cfg.MaxContextTokens <= 0 {
		return msgs
	}
	conv := make([]model.Message, 0, len(msgs))
	v := view{l: l}
	for _, m := range msgs {
		if m.Role == model.RoleAssistant {
			if c, ok := v.compacted(conv); ok {
				conv = c
			}
		}
		conv = append(conv, m)
	}
	return conv
}

// noteUpTo tells the Provenance the arguments of the calls not yet told,
// in the order the model asked for them, up to the call id (with it when
// with is set): a live step tells each call's arguments just before it
// judges the call, so before its own result and after the results of the
// calls before it. An id that is not waiting tells them all.
func (r *run) noteUpTo(id string, with bool) {
	n := len(r.unnoted)
	for i, c := range r.unnoted {
		if c.ID == id {
			n = i
			if with {
				n++
			}
			break
		}
	}
	p := r.l.cfg.Provenance
	for _, c := range r.unnoted[:n] {
		if p != nil {
			t, _ := r.l.cfg.Tools.Lookup(c.Name)
			noteArgs(p, t, c.Args)
		}
	}
	r.unnoted = r.unnoted[n:]
	for i, c := range r.unnoted {
		if c.ID == id { // a pending call: run, it tells its arguments itself
			r.unnoted = slices.Delete(r.unnoted, i, i+1)
			break
		}
	}
}

// tellNewWords tells the Provenance the user's message that begins a
// conversation's next turn (State.Turn, not Raw): the turns before told it
// everything else as it entered the conversation, this loop's Provenance
// being theirs. Told again, the conversation would grow the Provenance at
// every turn, and differ from the same conversation rebuilt from its log.
func (r *run) tellNewWords() {
	p := r.l.cfg.Provenance
	n := len(r.msgs)
	if p == nil || n == 0 || len(r.msgs[n-1].Blocks) == 0 {
		return
	}
	// NextTurn puts the new words last (in a message that may hold the
	// task, or earlier words, after turns that ended before the model said
	// anything: those were told already).
	last := r.msgs[n-1]
	if j := len(last.Blocks) - 1; userWords(n-1, j, last, last.Blocks[j]) {
		p.Trusted(last.Blocks[j].Text)
	}
}

// userWords reports whether block j of message i of a conversation is
// the user's own words: the task (the first block of the first message),
// a later message of the user's, which a conversation's next turn wraps
// as the user's input (NextTurn) wherever it stands in its message (after
// the answers of a turn cut short, after rein's note on how that turn
// ended), or the first block of a later message of the user's role in a
// conversation an embedder built. Other text blocks of the user's role
// are rein's (a compaction's summary, that note), never the user's; no
// tool result is a text block.
func userWords(i, j int, m model.Message, b model.Block) bool {
	if m.Role != model.RoleUser || b.Kind != model.KindText {
		return false
	}
	if strings.HasPrefix(b.Text, "<user_input") {
		return true
	}
	// A conversation an embedder built: the first block of a message of
	// the user's, unless it is rein's note on how a turn ended.
	return j == 0 && (i == 0 || !strings.HasPrefix(b.Text, turnNote))
}

// turnNote starts rein's note on how the previous turn ended (NextTurn).
const turnNote = "[rein: the previous turn ended"

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
	for i, m := range st.Messages {
		for j, b := range m.Blocks {
			switch {
			case userWords(i, j, m, b):
				p.Trusted(b.Text)
			case b.Kind == model.KindToolCall && b.Call != nil:
				t, _ := r.l.cfg.Tools.Lookup(b.Call.Name)
				noteArgs(p, t, b.Call.Args)
			case b.Kind == model.KindToolResult && b.Result != nil:
				r.l.tell(*b.Result, r.args[b.Result.CallID])
			}
		}
	}
	for _, s := range st.Settled {
		r.l.tell(s, r.args[s.CallID])
	}
}

// judgedCalls are the calls of a rebuilt conversation's last message, the
// model's: each had its verdict (resume.Read keeps no other).
func judgedCalls(st State) map[string]bool {
	m := map[string]bool{}
	if n := len(st.Messages); n > 0 && st.Messages[n-1].Role == model.RoleAssistant {
		for _, b := range st.Messages[n-1].Blocks {
			if b.Kind == model.KindToolCall && b.Call != nil {
				m[b.Call.ID] = true
			}
		}
	}
	return m
}

// callArgs maps each call of a rebuilt conversation (its messages and its
// pending calls) to its arguments, so that a result told again is told
// with the call that returned it.
func callArgs(st State) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for _, msg := range st.Messages {
		for _, b := range msg.Blocks {
			if b.Kind == model.KindToolCall && b.Call != nil {
				m[b.Call.ID] = b.Call.Args
			}
		}
	}
	for _, c := range st.Pending {
		m[c.ID] = c.Args
	}
	return m
}
