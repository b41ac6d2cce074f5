package anthropic

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/reinhq/rein/model"
)

// ProviderName marks the opaque blocks this package produces and accepts.
const ProviderName = "anthropic"

// emptySchema is offered for a tool that has no schema.
var emptySchema = json.RawMessage(`{"type":"object"}`)

// buildRequest maps req to the SDK's parameters and to the exact body to
// send. The body is the SDK's own encoding of the parameters, except that
// each opaque block is spliced in with the bytes it was received as: the
// SDK's encoder would compact it and escape <, > and &, and a thinking
// block's signature is only sure to hold for the bytes the API sent.
func (m *Model) buildRequest(req *model.Request) (anthropic.MessageNewParams, []byte, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(m.name), MaxTokens: m.maxTokens}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for i, t := range req.Tools {
		schema := t.Schema
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = emptySchema
		}
		if !isObject(schema) {
			return p, nil, fmt.Errorf("%w: the schema of tool %q is not a JSON object", ErrBadRequest, t.Name)
		}
		tp := &anthropic.ToolParam{
			Name:        t.Name,
			InputSchema: param.Override[anthropic.ToolInputSchemaParam](schema),
		}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		if i == len(req.Tools)-1 {
			tp.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: tp})
	}

	nonce := rand.Text()
	var opaque [][]byte // opaque[i] replaces the placeholder token(nonce, i)
	var last *anthropic.CacheControlEphemeralParam
	for mi, msg := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		for bi, b := range msg.Blocks {
			u, cc, raw, err := blockParam(b)
			if err != nil {
				return p, nil, fmt.Errorf("%w: message %d, block %d: %w", ErrBadRequest, mi, bi, err)
			}
			switch {
			case raw != nil:
				u = param.Override[anthropic.ContentBlockParamUnion](token(nonce, len(opaque)))
				opaque = append(opaque, raw)
			case cc == nil:
				continue // nothing to send
			}
			if cc != nil {
				last = cc
			}
			blocks = append(blocks, u)
		}
		if len(blocks) == 0 {
			continue // the API refuses empty messages
		}
		switch msg.Role {
		case model.RoleUser:
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		case model.RoleAssistant:
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		default:
			return p, nil, fmt.Errorf("%w: message %d has role %q: want user or assistant", ErrBadRequest, mi, msg.Role)
		}
	}
	if len(p.Messages) == 0 {
		return p, nil, fmt.Errorf("%w: no message to send", ErrBadRequest)
	}
	if last != nil {
		// The cache breakpoint on the conversation: everything up to here is
		// read from the cache on the next call.
		*last = anthropic.NewCacheControlEphemeralParam()
	}
	body, err := json.Marshal(p)
	if err != nil {
		return p, nil, fmt.Errorf("%w: encoding: %w", ErrBadRequest, err)
	}
	for i, raw := range opaque {
		tok := []byte(strconv.Quote(token(nonce, i)))
		if bytes.Count(body, tok) != 1 {
			return p, nil, fmt.Errorf("%w: opaque block %d was not encoded once", ErrBadRequest, i)
		}
		body = bytes.Replace(body, tok, raw, 1)
	}
	return p, body, nil
}

// token is the placeholder for opaque block i of one request. The nonce is
// random per request, so no text of the conversation can forge one.
func token(nonce string, i int) string { return "rein-opaque-" + nonce + "-" + strconv.Itoa(i) }

// blockParam maps one block. It returns the SDK block, where its cache
// control lives, or, for an opaque block of this provider, the raw JSON to
// send instead (with a nil cache control: the API does not cache on those).
// Both nil mean the block is not sent (empty text, another provider's data).
func blockParam(b model.Block) (anthropic.ContentBlockParamUnion, *anthropic.CacheControlEphemeralParam, []byte, error) {
	var u anthropic.ContentBlockParamUnion
	switch b.Kind {
	case model.KindText:
		if b.Text == "" {
			return u, nil, nil, nil
		}
		t := &anthropic.TextBlockParam{Text: b.Text}
		u.OfText = t
		return u, &t.CacheControl, nil, nil
	case model.KindToolCall:
		if b.Call == nil {
			return u, nil, nil, fmt.Errorf("a tool_call block without its call")
		}
		var input any = json.RawMessage(b.Call.Args)
		if !isObject(b.Call.Args) {
			input = map[string]any{} // the API takes only objects; the gates saw the real text
		}
		t := &anthropic.ToolUseBlockParam{ID: b.Call.ID, Name: b.Call.Name, Input: input}
		u.OfToolUse = t
		return u, &t.CacheControl, nil, nil
	case model.KindToolResult:
		if b.Result == nil {
			return u, nil, nil, fmt.Errorf("a tool_result block without its result")
		}
		t := &anthropic.ToolResultBlockParam{ToolUseID: b.Result.CallID}
		if b.Result.Content != "" {
			t.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: b.Result.Content}}}
		}
		for _, img := range b.Result.Images {
			t.Content = append(t.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: imageParam(img)})
		}
		if b.Result.IsError {
			t.IsError = param.NewOpt(true)
		}
		u.OfToolResult = t
		return u, &t.CacheControl, nil, nil
	case model.KindImage:
		if b.Image == nil {
			return u, nil, nil, fmt.Errorf("an image block without its image")
		}
		t := imageParam(*b.Image)
		u.OfImage = t
		return u, &t.CacheControl, nil, nil
	case model.KindOpaque:
		if b.Opaque == nil || b.Opaque.Provider != ProviderName {
			return u, nil, nil, nil // another provider's data means nothing here
		}
		if !isObject(b.Opaque.Data) {
			return u, nil, nil, fmt.Errorf("an opaque %q block whose data is not a JSON object", b.Opaque.Type)
		}
		return u, nil, b.Opaque.Data, nil
	default:
		return u, nil, nil, fmt.Errorf("unknown block kind %q", b.Kind)
	}
}

// imageParam is an image as a base64 image block.
func imageParam(img model.Image) *anthropic.ImageBlockParam {
	return &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
		Data: base64.StdEncoding.EncodeToString(img.Data), MediaType: anthropic.Base64ImageSourceMediaType(img.MediaType)}}}
}

// isObject reports whether raw, exactly as it is, is one valid JSON object:
// only JSON's own white space (space, tab, CR, LF) may surround it. The bytes
// checked are the bytes spliced into a request, so no other trimming applies:
// bytes.TrimSpace would also strip a vertical tab, a form feed or a Unicode
// space, none of which JSON allows.
func isObject(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(raw)
}
