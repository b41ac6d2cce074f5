package computer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"slices"
	"sync"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/jsonx"
)

// Script is a scripted vision model's script: the actions it takes, in
// order, whatever the screen shows, and the answer it ends with. The
// format is in docs/computer-use.md.
type Script struct {
	Steps []ScriptStep `json:"steps"`
}

// ScriptStep is one decision of a script: the action's fields, an
// optional reason and optional usage to report.
type ScriptStep struct {
	Action  Kind   `json:"action"`
	X       int    `json:"x,omitempty"`
	Y       int    `json:"y,omitempty"`
	Text    string `json:"text,omitempty"`
	DY      int    `json:"dy,omitempty"`
	Name    string `json:"name,omitempty"`
	Summary string `json:"summary,omitempty"`
	Why     string `json:"why,omitempty"`
	// Plan is the plan of a step whose action is "plan" (Config.Planned).
	Plan  *Plan        `json:"plan,omitempty"`
	Usage *model.Usage `json:"usage,omitempty"`
}

// ParseScript decodes a script strictly: unknown fields, an unknown action
// or an empty script are errors that say where.
func ParseScript(data []byte) (*Script, error) {
	var s Script
	if err := jsonx.DecodeStrict(data, &s); err != nil {
		return nil, fmt.Errorf("computer script: %w", err)
	}
	if len(s.Steps) == 0 {
		return nil, errors.New("computer script: no steps: give at least one action")
	}
	for i, st := range s.Steps {
		if st.Action == PlanTool || st.Plan != nil {
			if st.Action != PlanTool || st.Plan == nil {
				return nil, fmt.Errorf("computer script: step %d: a plan step has \"action\": \"plan\" and a \"plan\" object", i+1)
			}
			continue
		}
		a := st.action()
		if err := a.Validate(1<<20, 1<<20); err != nil {
			return nil, fmt.Errorf("computer script: step %d: %w", i+1, err)
		}
	}
	return &s, nil
}

func (st ScriptStep) action() Action {
	return Action{Kind: st.Action, X: st.X, Y: st.Y, Text: st.Text, DY: st.DY, Name: st.Name, Summary: st.Summary}
}

// Scripted is a model.Model that plays a Script: call i answers with step
// i, a call of the step's action tool (with its why as text before it),
// or, for a done step, the summary as the answer and no call. After the
// last step it answers "the script ended". A plan step is skipped where
// the session offers no plan tool (it does not plan). Usage, when a step gives none,
// is an estimate: the request's text at four characters a token plus the
// latest image at width×height/750 tokens (Anthropic's rule; only the
// latest screenshot is sent, see computer/anthropic), and the answer's
// text and arguments for output.
type Scripted struct {
	mu     sync.Mutex
	script *Script
	next   int
}

// NewScripted returns a model that plays s.
func NewScripted(s *Script) *Scripted { return &Scripted{script: s} }

var _ model.Model = (*Scripted)(nil)

// Generate returns the script's next step.
func (m *Scripted) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	planned := slices.ContainsFunc(req.Tools, func(t model.ToolDef) bool { return t.Name == PlanTool })
	m.mu.Lock()
	i := m.next
	for !planned && i < len(m.script.Steps) && m.script.Steps[i].Action == PlanTool {
		i++ // a plan step is played only where the session plans
	}
	m.next = i + 1
	m.mu.Unlock()
	st := ScriptStep{Action: Done, Summary: "the script ended"}
	if i < len(m.script.Steps) {
		st = m.script.Steps[i]
	}
	resp := &model.Response{}
	if st.Action == Done {
		resp.Blocks = []model.Block{model.TextBlock(st.Summary)}
		resp.StopReason = model.StopEndTurn
	} else {
		if st.Why != "" {
			resp.Blocks = append(resp.Blocks, model.TextBlock(st.Why))
		}
		call := model.ToolCall{ID: fmt.Sprintf("call_%d", i+1)}
		if st.Action == PlanTool {
			args, err := json.Marshal(st.Plan)
			if err != nil {
				return nil, fmt.Errorf("computer script: step %d: %w", i+1, err)
			}
			call.Name, call.Args = PlanTool, args
		} else {
			a := st.action()
			call.Name, call.Args = string(a.Kind), a.Args()
		}
		resp.Blocks = append(resp.Blocks, model.CallBlock(call))
		resp.StopReason = model.StopToolUse
	}
	if st.Usage != nil {
		resp.Usage = *st.Usage
	} else {
		resp.Usage = EstimateUsage(req, resp.Blocks)
	}
	return resp, nil
}

// EstimateUsage estimates the tokens of one call: the request's text (and
// tool definitions) and its latest image in, the answer's blocks out.
func EstimateUsage(req *model.Request, answer []model.Block) model.Usage {
	in := model.EstimateTokens(req)
	var latest *model.Image
	for _, m := range req.Messages {
		for _, b := range m.Blocks {
			switch {
			case b.Kind == model.KindImage && b.Image != nil:
				in -= model.ImageTokens(*b.Image)
				latest = b.Image
			case b.Kind == model.KindToolResult && b.Result != nil:
				for j := range b.Result.Images {
					in -= model.ImageTokens(b.Result.Images[j])
					latest = &b.Result.Images[j]
				}
			}
		}
	}
	if latest != nil {
		in += model.ImageTokens(*latest)
	}
	return model.Usage{Input: in, Output: model.EstimateOutputTokens(answer)}
}

// PixelHash is the SHA-256 of a PNG's pixels (as 8-bit RGBA) and size: two
// screenshots of the same screen hash the same even when their encoders
// chose different compression.
func PixelHash(pngData []byte) (string, error) {
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		return "", fmt.Errorf("decode PNG: %w", err)
	}
	var pix []byte
	switch im := img.(type) {
	case *image.RGBA:
		pix = im.Pix
	case *image.NRGBA:
		pix = im.Pix
	default:
		rgba := image.NewRGBA(img.Bounds())
		draw.Draw(rgba, rgba.Bounds(), img, img.Bounds().Min, draw.Src)
		pix = rgba.Pix
	}
	h := sha256.New()
	b := img.Bounds()
	fmt.Fprintf(h, "%d×%d\n", b.Dx(), b.Dy())
	h.Write(pix)
	return hex.EncodeToString(h.Sum(nil)), nil
}
