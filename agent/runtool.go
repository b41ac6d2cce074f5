package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

// runTool runs t, turning a panic into an error the model is told about: a
// misbehaving tool must not take the loop down with it. A tool.Imager
// returns images beside its text.
func runTool(ctx context.Context, t tool.Tool, args json.RawMessage) (out string, images []model.Image, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, images, err = "", nil, fmt.Errorf("the tool %s crashed (%v); try another way", t.Spec().Name, p)
		}
	}()
	if im, ok := t.(tool.Imager); ok {
		return im.RunImages(ctx, args)
	}
	out, err = t.Run(ctx, args)
	return out, nil, err
}
