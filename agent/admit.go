package agent

import "github.com/reinhq/rein/model"

// The conversation a run keeps is raw: the task and each tool result as
// they entered it (redacted, not capped, not wrapped), each result with its
// typed source and refusal flag. What the model reads is made from it here,
// in one place, whenever a request is built: a live step, a resumed
// session and a compacted conversation build their requests alike, so the
// same conversation is the same bytes however it was reached. The
// Provenance is told each text once, when it enters the conversation
// (tellTask, tell), never when a request is built.

// request is the model request for the conversation msgs, as the model
// reads it.
func (l *Loop) request(msgs []model.Message) *model.Request {
	return &model.Request{System: l.cfg.System, Messages: l.render(msgs), Tools: l.offered}
}

// render returns msgs as the model reads them: the task (the first
// message's first block) wrapped by the Intake as the user's input; each
// tool result that is not a refusal capped and wrapped by its source. A
// refusal is rein's words and is left as it is; so is every other block.
// msgs is not changed.
func (l *Loop) render(msgs []model.Message) []model.Message {
	out := make([]model.Message, len(msgs))
	for i, m := range msgs {
		out[i] = m
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
			out[i].Blocks = blocks
		}
	}
	return out
}

// compacted returns msgs compacted as a step compacts them before its
// model call (see compact), judged on the request they make, and whether
// it compacted.
func (l *Loop) compacted(msgs []model.Message) ([]model.Message, bool) {
	if l.cfg.MaxContextTokens <= 0 || len(msgs) <= KeepMessages+1 {
		return msgs, false
	}
	return compact(msgs, model.EstimateTokens(l.request(msgs)), l.cfg.MaxContextTokens)
}

// maxResult is the cap on a tool result the model reads.
func (l *Loop) maxResult() int {
	if l.cfg.MaxResultBytes == 0 {
		return DefaultMaxResultBytes
	}
	return l.cfg.MaxResultBytes
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
// is rein's words and is not told.
func (l *Loop) tell(res model.ToolResult) {
	if res.Refused || l.cfg.Provenance == nil {
		return
	}
	t, _ := l.cfg.Tools.Lookup(res.Name)
	noteResult(l.cfg.Provenance, t, res.Name, capResult(res.Content, l.maxResult()))
}
