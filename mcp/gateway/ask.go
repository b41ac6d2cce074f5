package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/internal/termsafe"
)

// hostApprover asks the host's human, through MCP elicitation, whether a
// call a gate asked about may run; a host that cannot elicit leaves it to
// the gateway's fallback (none: refused). Only an explicit accept with
// approve = true is a yes.
type hostApprover struct{ hs *hostSession }

// approveSchema is the one question of an approval.
var approveSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Allow this call?", "description": "Yes runs the call once; anything else refuses it."},
	},
	"required": []string{"approve"},
}

func (a hostApprover) Approve(ctx context.Context, req approve.Request) (bool, error) {
	res, err := a.hs.ask(ctx, &sdk.ElicitParams{Mode: "form", Message: approvalMessage(req), RequestedSchema: approveSchema})
	if errors.Is(err, errNoHost) {
		if a.hs.g.opts.Fallback == nil {
			return false, fmt.Errorf("%w: %w, and the gateway has no terminal to ask at", approve.ErrNoAnswer, err)
		}
		return a.hs.g.opts.Fallback.Approve(ctx, req)
	}
	if err != nil {
		return false, fmt.Errorf("asking the MCP host: %w", err)
	}
	if res == nil || res.Action != "accept" {
		return false, nil
	}
	yes, _ := res.Content["approve"].(bool)
	return yes, nil
}

// approvalMessage is what the host's human reads: the call whole, with
// what a reader cannot see made visible.
func approvalMessage(req approve.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rein gateway: the agent wants to call %s.\n", termsafe.Visible(req.Tool))
	fmt.Fprintf(&b, "Asked by rein's %s gate: %s\n", req.Gate, termsafe.Visible(req.Reason))
	for _, arg := range slices.Sorted(maps.Keys(req.Roles)) {
		fmt.Fprintf(&b, "%s (%s) is decisive.\n", termsafe.Visible(arg), req.Roles[arg])
	}
	fmt.Fprintf(&b, "Arguments: %s\n", termsafe.Visible(string(req.Args)))
	b.WriteString("Allow it to run once?")
	return b.String()
}

// hostAsker puts an upstream server's question (package mcp has already
// said which server asks, and warned when it wants a secret) to the host's
// human through elicitation; a host that cannot elicit leaves it to the
// fallback asker (none: declined).
type hostAsker struct{ hs *hostSession }

func (a hostAsker) Ask(ctx context.Context, question string) (string, error) {
	res, err := a.hs.ask(ctx, &sdk.ElicitParams{Mode: "form", Message: "rein gateway: " + question, RequestedSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"answer": map[string]any{"type": "string", "title": "Answer (empty declines)"}},
		"required":   []string{"answer"},
	}})
	if errors.Is(err, errNoHost) && a.hs.g.opts.FallbackAsker != nil {
		return a.hs.g.opts.FallbackAsker.Ask(ctx, question)
	}
	if err != nil || res == nil || res.Action != "accept" {
		return "", approve.ErrNoAnswer
	}
	s, _ := res.Content["answer"].(string)
	return s, nil
}
