package agent

import (
	"encoding/json"

	"github.com/reinhq/rein/model"
)

// The conversation a run keeps is raw: the task and each tool result as
// they entered it (redacted, not capped, not wrapped), each result with its
// typed source and refusal flag. What the model reads is made from it here,
// in one place, whenever a request is built: a live step, a resumed
// session and a compacted conversation build their requests alike, so the
// same conversation is the same bytes however it was reached. The
// Provenance is told each text once, when it enters the conversation
// (tellTask, tell), never when a request is built.

// view is a conversation as the model reads it, kept from one request to
// the next. A run's conversation only grows between compactions, and a
// message once appended is never changed in place, so each request renders
// and counts only the messages added since the last one; the rest are the
// same rendered messages (the same block slices), which the token estimate
// recognises too. What the model reads is exactly what render makes of the
// whole conversation.
type view struct {
	l   *Loop
	src []*model.Block // per message: the first block of the raw message rendered
	n   []int          // per message: its number of blocks
	out []model.Message
	est model.Estimator
}

// request is the model request for msgs, rendering only the messages that
// are new or were replaced since the last request.
func (v *view) request(msgs []model.Message) *model.Request {
	for i, m := range msgs {
		first := firstBlock(m.Blocks)
		if i < len(v.out) && first != nil && v.src[i] == first && v.n[i] == len(m.Blocks) {
			continue
		}
		v.src, v.n, v.out = append(v.src[:i], first), append(v.n[:i], len(m.Blocks)), append(v.out[:i], v.l.renderOne(i, m))
	}
	k := len(msgs)
	v.src, v.n, v.out = v.src[:k], v.n[:k], v.out[:k]
	// The full slice expression: a model that appends to the request's
	// messages gets a copy, never this view's next message.
	return &model.Request{System: v.l.cfg.System, Messages: v.out[:k:k], Tools: v.l.offered}
}

// compacted returns msgs compacted as a step compacts them before its
// model call (see compact), judged on the request they make, and whether
// it compacted.
func (v *view) compacted(msgs []model.Message) ([]model.Message, bool) {
	if v.l.cfg.MaxContextTokens <= 0 || len(msgs) <= KeepMessages+1 {
		return msgs, false
	}
	return compact(msgs, v.est.Estimate(v.request(msgs)), v.l.cfg.MaxContextTokens)
}

func firstBlock(b []model.Block) *model.Block {
	if len(b) == 0 {
		return nil
	}
	return &b[0]
}

// renderOne returns message i of a conversation as the model reads it: the
// task (the first message's first block) wrapped by the Intake as the
// user's input; each tool result that is not a refusal capped and wrapped
// by its source. A refusal is rein's words and is left as it is; so is
// every other block. m is not changed.
func (l *Loop) renderOne(i int, m model.Message) model.Message {
	var blocks []model.Block
	for j, b := range m.Blocks {
		switch {
		case i == 0 && j == 0 && m.Role == model.RoleUser && b.Kind == model.KindText:
			if l.cfg.Intake == nil {
				continue
			}
			b.Text = l.cfg.Intake.Task(b.Text)
		case b.Kind == model.KindToolResult && b.Result != nil && !b.Result.Refused:
			res := *b.Result
			res.Content = capResult(res.Content, l.maxResult())
			if l.cfg.Intake != nil {
				res.Content = l.cfg.Intake.Result(res.Name, res.Source, res.Content)
			}
			b.Result = &res
		default:
			continue
		}
		if blocks == nil {
			blocks = append([]model.Block(nil), m.Blocks...)
		}
		blocks[j] = b
	}
	if blocks != nil {
		m.Blocks = blocks
	}
	return m
}

// maxResult is the cap on a tool result the model reads.
func (l *Loop) maxResult() int {
	if l.cfg.MaxResultBytes == 0 {
		return DefaultMaxResultBytes
	}
	return l.cfg.MaxResultBytes
}

// tellDescriptions tells the Provenance, as untrusted, the descriptions
// of the offered tools a third party wrote (tool.Spec.UntrustedDescription):
// the model reads them before anything else, and what they say is no more
// the user's than a result is.
func (l *Loop) tellDescriptions() {
	if l.cfg.Provenance == nil {
		return
	}
	for _, name := range l.names {
		if t, ok := l.cfg.Tools.Lookup(name); ok && t.Spec().UntrustedDescription {
			l.cfg.Provenance.Untrusted(name, t.Spec().Description)
		}
	}
}

// tellTask tells the Provenance the task (redacted) as trusted.
func (l *Loop) tellTask(task string) {
	if l.cfg.Provenance != nil {
		l.cfg.Provenance.Trusted(task)
	}
}

// tell tells the Provenance a tool result (redacted) that enters the
// conversation, as the model reads it: capped, untrusted under the tool's
// name (or the model's own words, for a tool that echoes them). A refusal
// is rein's words and is not told. args are the arguments of the call it
// answers (nil when unknown).
func (l *Loop) tell(res model.ToolResult, args json.RawMessage) {
	if res.Refused || l.cfg.Provenance == nil {
		return
	}
	t, _ := l.cfg.Tools.Lookup(res.Name)
	noteResult(l.cfg.Provenance, t, res.Name, args, capResult(res.Content, l.maxResult()))
}
