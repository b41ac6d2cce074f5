package agent

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

// runTool runs the call's tool t, turning a panic into an error the model
// is told about: a misbehaving tool must not take the loop down with it.
// A tool that decodes its arguments (tool.Decoder) runs the value the gates
// judged (c.Decoded), decoded once; arguments that do not decode do not run.
func runTool(ctx context.Context, t tool.Tool, c *gate.Call) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("the tool %s crashed (%v); try another way", t.Spec().Name, p)
		}
	}()
	if d, ok := t.(tool.Decoder); ok {
		decoded, err := c.Decoded()
		if err != nil {
			return "", err
		}
		return d.RunDecoded(ctx, decoded)
	}
	return t.Run(ctx, c.Args)
}
