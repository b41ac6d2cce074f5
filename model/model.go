// Package model defines the one call rein makes to a language model and the
// provider-neutral messages that flow through it.
//
// A Model takes a Request (system text, messages, tool definitions) and returns
// a Response (content blocks, usage, the provider's stop reason). Providers
// translate these types to and from their wire formats; the loop never sees a
// provider's own types. A Block of kind KindOpaque carries provider data that
// rein does not interpret and must hand back unchanged on the next call
// (Anthropic's thinking blocks and their signatures, for instance). A
// Block of kind KindImage, or the Images of a ToolResult, carry pictures (a
// computer-use screenshot); providers send them as their wire format allows
// (see docs/providers.md).
//
// This package does not call any model itself; see model/scripted for the
// offline scripted model.
package model

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Model is a language model: one request in, one response out.
// Implementations must honour ctx: a cancelled context ends the call promptly.
type Model interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// Role says who wrote a message.
type Role string

// The two roles of a conversation. Tool results travel in user messages, as
// the providers expect.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Kind is the kind of a content block.
type Kind string

// The kinds of content block.
const (
	KindText       Kind = "text"
	KindToolCall   Kind = "tool_call"
	KindToolResult Kind = "tool_result"
	KindOpaque     Kind = "opaque"
	KindImage      Kind = "image"
)

// Block is one piece of a message. Exactly the field matching Kind is set.
type Block struct {
	Kind   Kind        `json:"kind"`
	Text   string      `json:"text,omitempty"`
	Call   *ToolCall   `json:"call,omitempty"`
	Result *ToolResult `json:"result,omitempty"`
	Opaque *Opaque     `json:"opaque,omitempty"`
	Image  *Image      `json:"image,omitempty"`
}

// Image is a picture in the conversation: its media type (image/png,
// image/jpeg, image/gif or image/webp) and its encoded bytes.
type Image struct {
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"`
}

// ToolCall is the model asking for a tool. Args is the JSON the model wrote,
// unparsed: it may be malformed, and the gates decide what it means.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// ToolResult answers one ToolCall, tied to it by CallID. IsError marks tool
// failures and refusals, so the model can tell them from output. Refused
// marks a result that is rein's own words, not the tool's: the call did not
// run (a gate refused it, or its files could not be saved). Such a result
// is neither data from a source nor wrapped as one. Images, when set, go
// with the text (the screenshot after a computer action).
//
// Source says where Content came from, as the tool that produced it said:
// intake wraps a result by it (a web page as an external document), never
// by the tool's name or the content's words.
type ToolResult struct {
	CallID  string  `json:"call_id"`
	Name    string  `json:"name"`
	Content string  `json:"content"`
	Images  []Image `json:"images,omitempty"`
	IsError bool    `json:"is_error,omitempty"`
	Refused bool    `json:"refused,omitempty"`
	Source  Source  `json:"source,omitzero"`
}

// Source is where a tool result's content came from: its kind and, for
// content from outside the session's machine, where exactly (a web page's
// final URL). The zero Source is local.
type Source struct {
	Kind     SourceKind `json:"kind"`
	Location string     `json:"location,omitempty"`
}

// SourceKind is the kind of place a tool result came from.
type SourceKind uint8

// The source kinds. A new kind comes with the tool that produces it.
const (
	// SourceLocal is the session's own machine: the work dir, a command's
	// output, the tool's own computation. The default.
	SourceLocal SourceKind = iota
	// SourceWebPage is a page fetched from the web; Location is its final
	// URL, after redirects.
	SourceWebPage
)

func (k SourceKind) String() string {
	switch k {
	case SourceLocal:
		return "local"
	case SourceWebPage:
		return "web_page"
	}
	return fmt.Sprintf("source(%d)", uint8(k))
}

// MarshalText writes the kind's name; an unknown kind is refused.
func (k SourceKind) MarshalText() ([]byte, error) {
	if k > SourceWebPage {
		return nil, fmt.Errorf("%s: not a source kind", k)
	}
	return []byte(k.String()), nil
}

// UnmarshalText reads "local" or "web_page"; any other text is refused.
func (k *SourceKind) UnmarshalText(b []byte) error {
	for _, v := range []SourceKind{SourceLocal, SourceWebPage} {
		if string(b) == v.String() {
			*k = v
			return nil
		}
	}
	return fmt.Errorf("source kind %q: want local or web_page", b)
}

// Opaque is provider content rein passes through without reading it.
// Provider names the provider that produced it; others must drop it.
type Opaque struct {
	Provider string          `json:"provider"`
	Type     string          `json:"type"`
	Data     json.RawMessage `json:"data"`
}

// Message is a turn of the conversation.
type Message struct {
	Role   Role    `json:"role"`
	Blocks []Block `json:"blocks"`
}

// ToolDef describes a tool to the model. Schema is a JSON Schema object.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// Request is everything sent to the model in one call.
type Request struct {
	System   string    `json:"system,omitempty"`
	Messages []Message `json:"messages"`
	Tools    []ToolDef `json:"tools,omitempty"`
}

// Usage counts the tokens of one call. CacheRead and CacheWrite are the
// prompt-cache tokens of providers that report them; Input excludes them.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
}

// Total is every token the call was billed for.
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:      u.Input + v.Input,
		Output:     u.Output + v.Output,
		CacheRead:  u.CacheRead + v.CacheRead,
		CacheWrite: u.CacheWrite + v.CacheWrite,
	}
}

// Common stop reasons. Providers report their own strings; these are the
// ones rein gives meaning to.
const (
	StopToolUse   = "tool_use"
	StopEndTurn   = "end_turn"
	StopMaxTokens = "max_tokens"
	StopRefusal   = "refusal"
)

// Response is the model's answer to one Request.
type Response struct {
	Blocks     []Block `json:"blocks"`
	Usage      Usage   `json:"usage"`
	StopReason string  `json:"stop_reason"`
}

// Text joins the text blocks of the response.
func (r *Response) Text() string { return JoinText(r.Blocks) }

// Calls returns the tool calls of the response, in order.
func (r *Response) Calls() []*ToolCall {
	var calls []*ToolCall
	for i := range r.Blocks {
		if r.Blocks[i].Kind == KindToolCall && r.Blocks[i].Call != nil {
			calls = append(calls, r.Blocks[i].Call)
		}
	}
	return calls
}

// JoinText concatenates the text of the text blocks.
func JoinText(blocks []Block) string {
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Kind == KindText {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Kind: KindText, Text: s} }

// CallBlock returns a tool-call block.
func CallBlock(c ToolCall) Block { return Block{Kind: KindToolCall, Call: &c} }

// ImageBlock returns an image block.
func ImageBlock(img Image) Block { return Block{Kind: KindImage, Image: &img} }

// ResultBlock returns a tool-result block.
func ResultBlock(r ToolResult) Block { return Block{Kind: KindToolResult, Result: &r} }
