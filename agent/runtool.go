package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/tool"
)

// runTool runs t, turning a panic into an error the model is told about: a
// misbehaving tool must not take the loop down with it.
func runTool(ctx context.Context, t tool.Tool, args json.RawMessage) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("the tool %s crashed (%v); try another way", t.Spec().Name, p)
		}
	}()
	return t.Run(ctx, args)
}
