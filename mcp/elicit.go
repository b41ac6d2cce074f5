package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/secret"
)

// maxElicitFields bounds how many questions one elicitation may ask.
const maxElicitFields = 8

// elicit puts a server's request for input to the human, one question per
// field, each naming the server. Nothing is answered automatically: with
// no one to ask, or an empty or refused answer, the request is declined.
// URL-mode requests (open a page) are declined: rein opens no browser for
// a server.
func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	decline := &sdk.ElicitResult{Action: "decline"}
	p := req.Params
	if s.asker == nil || p == nil || p.Mode == "url" || p.URL != "" {
		return decline, nil
	}
	fields, err := elicitFields(p.RequestedSchema)
	if err != nil || len(fields) > maxElicitFields {
		return decline, nil
	}
	content := map[string]any{}
	for _, f := range fields {
		q := fmt.Sprintf("The MCP server %q (not rein, not your task) asks: %s\n%s", s.name, visible(p.Message), f.question())
		ans, err := s.asker.Ask(ctx, q)
		ans = strings.TrimSpace(ans)
		if err != nil || ans == "" {
			return decline, nil
		}
		v, err := f.parse(ans)
		if err != nil {
			return decline, nil
		}
		content[f.name] = v
	}
	return &sdk.ElicitResult{Action: "accept", Content: content}, nil
}

// elicitField is one top-level property of a requested schema.
type elicitField struct {
	name, typ, description string
	enum                   []string
}

func elicitFields(schema any) ([]elicitField, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Properties map[string]struct {
			Type        string   `json:"type"`
			Description string   `json:"description"`
			Title       string   `json:"title"`
			Enum        []string `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	var out []elicitField
	for _, name := range slices.Sorted(maps.Keys(doc.Properties)) {
		p := doc.Properties[name]
		d := p.Description
		if d == "" {
			d = p.Title
		}
		out = append(out, elicitField{name: name, typ: p.Type, description: d, enum: p.Enum})
	}
	return out, nil
}

// question is the prompt for one field; a field that looks like it wants a
// secret says so.
func (f elicitField) question() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Field %q", visible(f.name))
	if f.typ != "" {
		fmt.Fprintf(&b, " (%s)", visible(f.typ))
	}
	if f.description != "" {
		fmt.Fprintf(&b, ": %s", visible(f.description))
	}
	if len(f.enum) > 0 {
		fmt.Fprintf(&b, " [one of: %s]", visible(strings.Join(f.enum, ", ")))
	}
	if secret.LooksSecret(f.name) || secret.LooksSecret(strings.ReplaceAll(f.description, " ", "_")) {
		b.WriteString("\nWARNING: this asks for a secret. The server gets what you type; rein cannot see what it does with it. Leave it empty to decline.")
	}
	b.WriteString("\nAnswer (empty declines): ")
	return b.String()
}

// parse converts an answer to the field's type.
func (f elicitField) parse(ans string) (any, error) {
	switch f.typ {
	case "number":
		return strconv.ParseFloat(ans, 64)
	case "integer":
		return strconv.ParseInt(ans, 10, 64)
	case "boolean":
		switch strings.ToLower(ans) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("not yes or no: %q", ans)
	}
	if len(f.enum) > 0 && !slices.Contains(f.enum, ans) {
		return nil, fmt.Errorf("not one of %v", f.enum)
	}
	return ans, nil
}
