package openai

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/reinhq/rein/model"
)

// OpaqueToolCall is the Opaque.Type of a tool call rein does not run (any
// type but "function"); its Data is the call's JSON as received, and it is
// sent back unchanged in the assistant message's tool_calls.
const OpaqueToolCall = "tool_call"

// errorPrefix marks an error result: Chat Completions has no is_error.
const errorPrefix = "Error: "

// params builds the request body.
func (m *Model) params(req *model.Request) (oai.ChatCompletionNewParams, error) {
	p := oai.ChatCompletionNewParams{Model: shared.ChatModel(m.name)}
	if m.newLimit {
		p.MaxCompletionTokens = param.NewOpt(m.maxTokens)
	} else {
		p.MaxTokens = param.NewOpt(m.maxTokens)
	}
	if req.System != "" {
		p.Messages = append(p.Messages, oai.SystemMessage(req.System))
	}
	for i := range req.Messages {
		msgs, err := toMessages(&req.Messages[i])
		if err != nil {
			return p, fmt.Errorf("%w: message %d: %w", ErrResponse, i+1, err)
		}
		p.Messages = append(p.Messages, msgs...)
	}
	for _, t := range req.Tools {
		tp, err := toTool(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, tp)
	}
	return p, nil
}

// toTool makes a function tool. The schema's numbers are kept as written.
func toTool(t model.ToolDef) (oai.ChatCompletionToolUnionParam, error) {
	fn := shared.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		fn.Description = param.NewOpt(t.Description)
	}
	if len(bytes.TrimSpace(t.Schema)) > 0 {
		// Each member stays the JSON it was: numbers keep their spelling.
		var members map[string]json.RawMessage
		if err := json.Unmarshal(t.Schema, &members); err != nil || members == nil {
			return oai.ChatCompletionToolUnionParam{}, fmt.Errorf("openai: tool %q: its schema is not a JSON object", t.Name)
		}
		fn.Parameters = make(shared.FunctionParameters, len(members))
		for k, v := range members {
			fn.Parameters[k] = v
		}
	} else {
		fn.Parameters = shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	}
	return oai.ChatCompletionFunctionTool(fn), nil
}

// toMessages maps one rein message to Chat Completions messages. A user
// message becomes its tool results as "tool" messages first (they must follow
// the assistant's tool_calls directly), then its text as one user message.
// Images go in that user message as image_url parts (data: URLs): a "tool"
// message carries text only, so a tool result's images follow it there, and
// its text says so. Opaque blocks of other providers are dropped.
func toMessages(msg *model.Message) ([]oai.ChatCompletionMessageParamUnion, error) {
	switch msg.Role {
	case model.RoleAssistant:
		return []oai.ChatCompletionMessageParamUnion{assistantMessage(msg.Blocks)}, nil
	case model.RoleUser:
		var out []oai.ChatCompletionMessageParamUnion
		var text []string
		var images []model.Image
		for _, b := range msg.Blocks {
			switch {
			case b.Kind == model.KindToolResult && b.Result != nil:
				content := b.Result.Content
				if b.Result.IsError && !strings.HasPrefix(content, "Error:") {
					content = errorPrefix + content
				}
				if n := len(b.Result.Images); n > 0 {
					content += fmt.Sprintf("\n[%d image(s) of this result follow in the next user message]", n)
					images = append(images, b.Result.Images...)
				}
				out = append(out, oai.ToolMessage(content, b.Result.CallID))
			case b.Kind == model.KindText:
				text = append(text, b.Text)
			case b.Kind == model.KindImage && b.Image != nil:
				images = append(images, *b.Image)
			}
		}
		switch {
		case len(images) > 0:
			parts := make([]oai.ChatCompletionContentPartUnionParam, 0, len(images)+1)
			if len(text) > 0 {
				parts = append(parts, oai.TextContentPart(strings.Join(text, "\n\n")))
			}
			for _, img := range images {
				parts = append(parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{
					URL: "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)}))
			}
			out = append(out, oai.UserMessage(parts))
		case len(text) > 0:
			out = append(out, oai.UserMessage(strings.Join(text, "\n\n")))
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown role %q", msg.Role)
	}
}

func assistantMessage(blocks []model.Block) oai.ChatCompletionMessageParamUnion {
	var a oai.ChatCompletionAssistantMessageParam
	var text strings.Builder
	for _, b := range blocks {
		switch {
		case b.Kind == model.KindText:
			text.WriteString(b.Text)
		case b.Kind == model.KindToolCall && b.Call != nil:
			args := string(b.Call.Args)
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID:       b.Call.ID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Call.Name, Arguments: args},
				},
			})
		case b.Kind == model.KindOpaque && b.Opaque != nil && b.Opaque.Provider == Provider &&
			b.Opaque.Type == OpaqueToolCall && json.Valid(b.Opaque.Data):
			a.ToolCalls = append(a.ToolCalls,
				param.Override[oai.ChatCompletionMessageToolCallUnionParam](json.RawMessage(b.Opaque.Data)))
		}
	}
	if text.Len() > 0 || len(a.ToolCalls) == 0 {
		a.Content.OfString = param.NewOpt(text.String())
	}
	return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// toResponse maps the first choice of a completion.
func toResponse(cc *oai.ChatCompletion) (*model.Response, error) {
	if len(cc.Choices) == 0 {
		return nil, fmt.Errorf("%w: the answer has no choices", ErrResponse)
	}
	ch := cc.Choices[0]
	msg := ch.Message
	resp := &model.Response{Usage: toUsage(cc.Usage)}
	if msg.Content != "" {
		resp.Blocks = append(resp.Blocks, model.TextBlock(msg.Content))
	}
	if msg.Refusal != "" {
		// The refusal's words are the answer's reason; they go back as text.
		resp.Blocks = append(resp.Blocks, model.TextBlock(msg.Refusal))
	}
	calls := 0
	for _, tc := range msg.ToolCalls {
		if tc.Type == "function" || (tc.Type == "" && tc.Function.Name != "") {
			id := tc.ID
			if id == "" {
				id = newCallID()
			}
			args := tc.Function.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			resp.Blocks = append(resp.Blocks, model.CallBlock(model.ToolCall{ID: id, Name: tc.Function.Name, Args: json.RawMessage(args)}))
			calls++
			continue
		}
		raw := tc.RawJSON()
		if !json.Valid([]byte(raw)) {
			continue
		}
		resp.Blocks = append(resp.Blocks, model.Block{Kind: model.KindOpaque,
			Opaque: &model.Opaque{Provider: Provider, Type: OpaqueToolCall, Data: json.RawMessage(raw)}})
	}
	model.UniqueCallIDs(resp.Blocks) // two calls under one id would break the next request
	resp.StopReason = stopReason(ch.FinishReason, msg.Refusal != "", calls > 0)
	return resp, nil
}

// stopReason maps a finish_reason. Local servers often say "stop" even when
// the answer carries tool calls; those are tool use.
func stopReason(finish string, refused, called bool) string {
	switch {
	case finish == "content_filter" || refused:
		return model.StopRefusal
	case finish == "length":
		return model.StopMaxTokens
	case finish == "tool_calls" || finish == "function_call":
		return model.StopToolUse
	case called && (finish == "stop" || finish == ""):
		return model.StopToolUse
	case finish == "stop" || finish == "":
		return model.StopEndTurn
	default:
		return finish
	}
}

// toUsage splits cached prompt tokens from the rest: prompt_tokens counts
// them all, model.Usage.Input excludes them.
func toUsage(u oai.CompletionUsage) model.Usage {
	read := max(u.PromptTokensDetails.CachedTokens, 0)
	write := max(u.PromptTokensDetails.CacheWriteTokens, 0)
	in := max(u.PromptTokens-read-write, 0)
	return model.Usage{Input: in, Output: max(u.CompletionTokens, 0), CacheRead: read, CacheWrite: write}
}

// newCallID names a tool call the server left without an id, so its result
// can be tied to it.
func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_rein_" + hex.EncodeToString(b[:])
}
