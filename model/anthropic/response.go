package anthropic

import (
	"bytes"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/reinhq/rein/model"
)

// mapResponse turns the API's message into a model.Response. Text and
// tool_use blocks are mapped; every other block (thinking,
// redacted_thinking, server tools, types added later) becomes an opaque
// block holding the exact bytes it was received as.
func mapResponse(msg *anthropic.Message) (*model.Response, error) {
	if msg == nil {
		return nil, fmt.Errorf("%w: no message", ErrBadResponse)
	}
	resp := &model.Response{
		StopReason: stopReason(msg.StopReason),
		Usage: model.Usage{
			Input:      max(0, msg.Usage.InputTokens),
			Output:     max(0, msg.Usage.OutputTokens),
			CacheRead:  max(0, msg.Usage.CacheReadInputTokens),
			CacheWrite: max(0, msg.Usage.CacheCreationInputTokens),
		},
	}
	for i, b := range msg.Content {
		switch b.Type {
		case "text":
			resp.Blocks = append(resp.Blocks, model.TextBlock(b.Text))
		case "tool_use":
			if b.ID == "" {
				return nil, fmt.Errorf("%w: tool_use block %d has no id, so its result could not be tied to it", ErrBadResponse, i)
			}
			args := bytes.Clone(bytes.TrimSpace(b.Input))
			if len(args) == 0 {
				args = []byte("{}")
			}
			resp.Blocks = append(resp.Blocks, model.CallBlock(model.ToolCall{ID: b.ID, Name: b.Name, Args: args}))
		default:
			raw := b.RawJSON()
			if !isObject([]byte(raw)) {
				return nil, fmt.Errorf("%w: content block %d is not a JSON object", ErrBadResponse, i)
			}
			resp.Blocks = append(resp.Blocks, model.Block{Kind: model.KindOpaque, Opaque: &model.Opaque{
				Provider: ProviderName, Type: b.Type, Data: []byte(raw),
			}})
		}
	}
	model.UniqueCallIDs(resp.Blocks) // two tool_use blocks under one id would break the next request
	if len(resp.Blocks) == 0 && resp.StopReason == "" {
		return nil, fmt.Errorf("%w: no content and no stop reason", ErrBadResponse)
	}
	return resp, nil
}

// stopReason maps the API's stop reasons onto rein's; the others (such as
// stop_sequence, pause_turn, model_context_window_exceeded) pass through as
// their strings, for the loop to stop on.
func stopReason(s anthropic.StopReason) string {
	switch s {
	case anthropic.StopReasonToolUse:
		return model.StopToolUse
	case anthropic.StopReasonEndTurn:
		return model.StopEndTurn
	case anthropic.StopReasonMaxTokens:
		return model.StopMaxTokens
	case anthropic.StopReasonRefusal:
		return model.StopRefusal
	default:
		return string(s)
	}
}
