package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// sourcedTool is a tool that says where its output came from
// (tool.NewSourced: webfetch says a web page, and which). Any other tool's
// output is local.
type sourcedTool interface {
	RunSourced(ctx context.Context, args json.RawMessage) (string, model.Source, error)
}

// runTool runs t, turning a panic into an error the model is told about: a
// misbehaving tool must not take the loop down with it. It returns the
// output and where it came from, as the tool said.
func runTool(ctx context.Context, t tool.Tool, args json.RawMessage) (out string, src model.Source, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, src, err = "", model.Source{}, fmt.Errorf("the tool %s crashed (%v); try another way", t.Spec().Name, p)
		}
	}()
	if s, ok := t.(sourcedTool); ok {
		return s.RunSourced(ctx, args)
	}
	out, err = t.Run(ctx, args)
	return out, model.Source{}, err
}
