package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/model/jsonx"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/schema"
)

// mcpTool is one MCP tool as a rein tool. It decides nothing: the gates
// judge its calls by its spec (effect class, roles) before Run.
type mcpTool struct {
	srv       *server
	mcpName   string
	spec      tool.Spec
	schema    *schema.Schema
	maxResult int
}

var (
	_ tool.Tool      = (*mcpTool)(nil)
	_ tool.Validator = (*mcpTool)(nil)
)

// Spec returns the tool's spec: its description wrapped as untrusted data.
func (t *mcpTool) Spec() tool.Spec { return t.spec }

// Validate checks the arguments against the tool's input schema.
func (t *mcpTool) Validate(args json.RawMessage) error {
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage(`{}`)
	}
	if !jsonx.IsObject(args) {
		return fmt.Errorf("%w for %s: expected a JSON object, got %s", tool.ErrArgs, t.spec.Name, jsonx.Kind(args))
	}
	if err := jsonx.CheckKeys(args); err != nil {
		return fmt.Errorf("%w for %s: %w", tool.ErrArgs, t.spec.Name, err)
	}
	if err := t.schema.Validate(args); err != nil {
		return fmt.Errorf("%w for %s: %w", tool.ErrArgs, t.spec.Name, err)
	}
	return nil
}

// Run calls the tool on its server. An error result, a server that is
// gone or slow, and a definition that changed meanwhile are errors, which
// the loop hands the model as error results.
func (t *mcpTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	if err := t.Validate(args); err != nil {
		return "", err
	}
	if err := t.srv.refresh(ctx); err != nil {
		return "", err
	}
	if t.srv.isChanged(t.mcpName) {
		return "", fmt.Errorf("%w: server %q changed or removed %s while the session ran; it is unavailable until the user approves the new definition (rein mcp pin %s) and starts a new session",
			ErrChanged, t.srv.name, t.spec.Name, t.srv.name)
	}
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage(`{}`)
	}
	res, err := t.srv.call(ctx, t.mcpName, args)
	if err != nil {
		return "", err
	}
	text := resultText(res, t.maxResult)
	if res.IsError {
		return "", fmt.Errorf("%w: %s", ErrToolFailed, text)
	}
	return text, nil
}

// rawArgs keeps the arguments' bytes as the model wrote them (validated).
func rawArgs(b []byte) json.RawMessage { return json.RawMessage(b) }

// resultText renders a result's content as text, at most max bytes of it
// (then a note of how much was cut). What is not text (images, audio,
// binary resources) is named, not shown.
func resultText(res *sdk.CallToolResult, max int) string {
	b := &capped{max: max}
	for i, c := range res.Content {
		if i > 0 {
			b.add("\n")
		}
		switch c := c.(type) {
		case *sdk.TextContent:
			b.add(c.Text)
		case *sdk.ImageContent:
			b.add(fmt.Sprintf("[image %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			b.add(fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			b.add(fmt.Sprintf("[resource link %q: %s]", c.Name, c.URI))
		case *sdk.EmbeddedResource:
			switch {
			case c.Resource == nil:
				b.add("[empty resource]")
			case c.Resource.Text != "":
				b.add(fmt.Sprintf("[resource %s]\n", c.Resource.URI))
				b.add(c.Resource.Text)
			default:
				b.add(fmt.Sprintf("[resource %s: %d bytes of %s, not shown]", c.Resource.URI, len(c.Resource.Blob), c.Resource.MIMEType))
			}
		default:
			b.add(fmt.Sprintf("[content of type %T, not shown]", c))
		}
	}
	// Structured content is shown unless a text block already carries it
	// (the spec asks servers to, and not all do: the go-sdk's memory
	// server answers read_graph with "Graph read successfully" and the
	// graph only as structured content).
	if res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil && !hasText(res.Content, data) {
			if len(res.Content) > 0 {
				b.add("\n[structured content]\n")
			}
			b.add(string(data))
		}
	}
	return b.String()
}

// hasText reports whether a text block of content is data, as JSON.
func hasText(content []sdk.Content, data []byte) bool {
	for _, c := range content {
		tc, ok := c.(*sdk.TextContent)
		if !ok {
			continue
		}
		var a, b any
		if json.Unmarshal([]byte(tc.Text), &a) == nil && json.Unmarshal(data, &b) == nil && reflect.DeepEqual(a, b) {
			return true
		}
	}
	return false
}

// capped is a builder that keeps at most max bytes and counts the rest.
type capped struct {
	max  int
	b    strings.Builder
	lost int
}

func (c *capped) add(s string) {
	room := c.max - c.b.Len()
	if room <= 0 {
		c.lost += len(s)
		return
	}
	if len(s) > room {
		cut := room
		for cut > 0 && s[cut]&0xC0 == 0x80 { // a rune boundary
			cut--
		}
		c.b.WriteString(s[:cut])
		c.lost += len(s) - cut
		return
	}
	c.b.WriteString(s)
}

func (c *capped) String() string {
	if c.lost > 0 {
		return fmt.Sprintf("%s\n[result cut: %d more bytes from the MCP server not kept]", c.b.String(), c.lost)
	}
	return c.b.String()
}
