package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// sourcedTool is a tool that says where its output came from
// (tool.NewSourced: webfetch says a web page, and which). Any other tool's
// output is local.
type sourcedTool interface {
	RunSourced(ctx context.Context, args json.RawMessage) (string, model.Source, error)
}

// runTool runs the call's tool t, turning a panic into an error the model
// is told about: a misbehaving tool must not take the loop down with it.
// A tool that decodes its arguments (tool.Decoder) runs the value the gates
// judged (c.Decoded), decoded once; arguments that do not decode do not run.
// A tool.Imager returns images beside its text. It returns the output and
// where it came from, as the tool said.
func runTool(ctx context.Context, t tool.Tool, c *gate.Call) (out string, images []model.Image, src model.Source, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, images, src, err = "", nil, model.Source{}, fmt.Errorf("the tool %s crashed (%v); try another way", t.Spec().Name, p)
		}
	}()
	if im, ok := t.(tool.Imager); ok {
		out, images, err = im.RunImages(ctx, c.Args)
		return out, images, model.Source{}, err
	}
	if d, ok := t.(tool.Decoder); ok {
		decoded, err := c.Decoded()
		if err != nil {
			return "", nil, model.Source{}, err
		}
		out, src, err := d.RunDecoded(ctx, decoded)
		return out, nil, src, err
	}
	if s, ok := t.(sourcedTool); ok {
		out, src, err := s.RunSourced(ctx, c.Args)
		return out, nil, src, err
	}
	out, err = t.Run(ctx, c.Args)
	return out, nil, model.Source{}, err
}
