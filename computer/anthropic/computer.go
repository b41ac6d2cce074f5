// Package anthropic is the computer-use model over Anthropic's computer-use
// tool (the computer_20250124 beta): a model.Model for computer.Session
// that maps the agent loop's conversation — the task with the first
// screenshot, the calls of rein's action tools (click, type, scroll, key,
// wait) and their results with screenshots — to the beta computer tool
// through a model/anthropic.Model, and maps the tool_use it answers with
// back to calls of rein's action tools. It sits above both package computer
// and the provider, so that the provider imports only package model.
package anthropic

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/reinhq/rein/computer"
	"github.com/reinhq/rein/model"
	provider "github.com/reinhq/rein/model/anthropic"
)

// The computer-use tool rein offers: Anthropic's computer_20250124 beta.
const (
	ComputerToolType = "computer_20250124"
	ComputerBeta     = "computer-use-2025-01-24"
	computerToolName = "computer"
)

// The largest screenshot sent to the model; bigger screens are scaled down
// to fit, keeping the aspect, and the model's coordinates scaled back.
// Anthropic's computer-use guidance: at most about 1.15 megapixels, and
// XGA/WXGA-sized images work best.
const (
	MaxScreenWidth  = 1280
	MaxScreenHeight = 800
)

// Computer is a model.Model backed by Anthropic's computer-use tool. Each
// call sends the whole conversation: every action call as a tool_use of
// the computer tool (coordinates scaled to the image the model saw), every
// result as a tool_result with rein's observation. Only the latest
// screenshot is sent as an image (scaled to fit MaxScreenWidth×
// MaxScreenHeight); earlier ones are described by their observations.
type Computer struct {
	m *provider.Model
}

var _ model.Model = (*Computer)(nil)

// New returns the computer-use model over m's client and model name.
func New(m *provider.Model) *Computer { return &Computer{m: m} }

// Name names the model in the audit log.
func (c *Computer) Name() string { return c.m.Name() + " (computer use)" }

// Generate asks the model for the next action, or its answer.
func (c *Computer) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: no request", provider.ErrBadRequest)
	}
	last := latestImage(req.Messages)
	if last == nil {
		if planTool(req) == nil {
			return nil, fmt.Errorf("%w: no screenshot in the conversation", provider.ErrBadRequest)
		}
		// A session that plans shows the screen after the plan: until
		// then the model is offered the plan tool alone.
		fields, err := fields(req, nil, nil, 0, 0, 0, 0)
		if err != nil {
			return nil, err
		}
		msg, err := c.m.Beta(ctx, ComputerBeta, fields)
		if err != nil {
			return nil, err
		}
		return mapComputerResponse(msg, 0, 0, 0, 0)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(last.Data))
	if err != nil {
		return nil, fmt.Errorf("%w: the latest screenshot: %v", provider.ErrBadRequest, err)
	}
	screen := computer.Screenshot{PNG: last.Data, Width: cfg.Width, Height: cfg.Height}
	shot, w, h, err := scaleScreenshot(screen)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", provider.ErrBadRequest, err)
	}
	fields, err := fields(req, last, shot, screen.Width, screen.Height, w, h)
	if err != nil {
		return nil, err
	}
	msg, err := c.m.Beta(ctx, ComputerBeta, fields)
	if err != nil {
		return nil, err
	}
	return mapComputerResponse(msg, screen.Width, screen.Height, w, h)
}

// latestImage returns the last image of the conversation, in an image
// block or a tool result.
func latestImage(msgs []model.Message) *model.Image {
	var last *model.Image
	for _, m := range msgs {
		for _, b := range m.Blocks {
			switch {
			case b.Kind == model.KindImage && b.Image != nil:
				last = b.Image
			case b.Kind == model.KindToolResult && b.Result != nil:
				for i := range b.Result.Images {
					last = &b.Result.Images[i]
				}
			}
		}
	}
	return last
}

type cuBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []cuBlock       `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Source    *cuImage        `json:"source,omitempty"`
}

type cuImage struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type cuMessage struct {
	Role    string    `json:"role"`
	Content []cuBlock `json:"content"`
}

// olderShot replaces a screenshot that is not the latest.
const olderShot = "[an earlier screenshot, not sent again]"

// fields are the request's fields but the model and max_tokens, which the
// provider sets. last is the latest screenshot, sent as shot (w×h); the
// screen is sw×sh.
func fields(req *model.Request, last *model.Image, shot []byte, sw, sh, w, h int) (map[string]any, error) {
	img := cuBlock{Type: "image", Source: &cuImage{Type: "base64", MediaType: "image/png", Data: base64.StdEncoding.EncodeToString(shot)}}
	picture := func(im *model.Image) cuBlock {
		if im == last {
			return img
		}
		return cuBlock{Type: "text", Text: olderShot}
	}
	sx, sy := float64(w)/float64(max(1, sw)), float64(h)/float64(max(1, sh))
	var msgs []cuMessage
	for mi, m := range req.Messages {
		var content []cuBlock
		for _, b := range m.Blocks {
			switch {
			case b.Kind == model.KindText && b.Text != "":
				content = append(content, cuBlock{Type: "text", Text: b.Text})
			case b.Kind == model.KindImage && b.Image != nil:
				content = append(content, picture(b.Image))
			case b.Kind == model.KindToolCall && b.Call != nil && b.Call.Name == computer.PlanTool:
				content = append(content, cuBlock{Type: "tool_use", ID: b.Call.ID, Name: computer.PlanTool, Input: b.Call.Args})
			case b.Kind == model.KindToolCall && b.Call != nil:
				a, err := computer.ActionOf(b.Call.Name, b.Call.Args)
				if err != nil {
					return nil, fmt.Errorf("%w: message %d: %v", provider.ErrBadRequest, mi, err)
				}
				input, err := json.Marshal(toWire(a, sx, sy))
				if err != nil {
					return nil, fmt.Errorf("%w: %v", provider.ErrBadRequest, err)
				}
				content = append(content, cuBlock{Type: "tool_use", ID: b.Call.ID, Name: computerToolName, Input: input})
			case b.Kind == model.KindToolResult && b.Result != nil:
				res := cuBlock{Type: "tool_result", ToolUseID: b.Result.CallID, IsError: b.Result.IsError}
				if b.Result.Content != "" {
					res.Content = append(res.Content, cuBlock{Type: "text", Text: b.Result.Content})
				}
				for i := range b.Result.Images {
					res.Content = append(res.Content, picture(&b.Result.Images[i]))
				}
				content = append(content, res)
			}
		}
		if len(content) == 0 {
			continue // the API refuses empty messages
		}
		msgs = append(msgs, cuMessage{Role: string(m.Role), Content: content})
	}
	var tools []map[string]any
	if last != nil {
		tools = append(tools, map[string]any{"type": ComputerToolType, "name": computerToolName,
			"display_width_px": w, "display_height_px": h})
	}
	if p := planTool(req); p != nil {
		tools = append(tools, map[string]any{"name": p.Name, "description": p.Description, "input_schema": p.Schema})
	}
	return map[string]any{
		"system":   req.System,
		"messages": msgs,
		"tools":    tools,
	}, nil
}

// planTool returns the plan tool when the request offers it (a session
// that plans): it goes to the model as a tool of its own beside the
// computer tool.
func planTool(req *model.Request) *model.ToolDef {
	for i := range req.Tools {
		if req.Tools[i].Name == computer.PlanTool {
			return &req.Tools[i]
		}
	}
	return nil
}

// The key names of the computer-use tool (xdotool's) and rein's.
var toReinKey = map[string]string{
	"return": "Enter", "enter": "Enter", "kp_enter": "Enter", "tab": "Tab", "escape": "Escape", "esc": "Escape",
	"backspace": "Backspace", "delete": "Delete", "space": "Space", "up": "ArrowUp", "down": "ArrowDown",
	"left": "ArrowLeft", "right": "ArrowRight", "page_up": "PageUp", "prior": "PageUp", "page_down": "PageDown",
	"next": "PageDown", "home": "Home", "end": "End",
}

var toWireKey = map[string]string{
	"Enter": "Return", "Tab": "Tab", "Escape": "Escape", "Backspace": "BackSpace", "Delete": "Delete",
	"Space": "space", "ArrowUp": "Up", "ArrowDown": "Down", "ArrowLeft": "Left", "ArrowRight": "Right",
	"PageUp": "Page_Up", "PageDown": "Page_Down", "Home": "Home", "End": "End",
}

// scrollStep is the pixels of one scroll_amount unit.
const scrollStep = 100

type wireAction struct {
	Action          string `json:"action"`
	Coordinate      []int  `json:"coordinate,omitempty"`
	Text            string `json:"text,omitempty"`
	ScrollDirection string `json:"scroll_direction,omitempty"`
	ScrollAmount    int    `json:"scroll_amount,omitempty"`
	Duration        int    `json:"duration,omitempty"`
}

func toWire(a computer.Action, sx, sy float64) wireAction {
	switch a.Kind {
	case computer.Click:
		return wireAction{Action: "left_click", Coordinate: []int{int(float64(a.X) * sx), int(float64(a.Y) * sy)}}
	case computer.Type:
		return wireAction{Action: "type", Text: a.Text}
	case computer.Key:
		k := toWireKey[a.Name]
		if k == "" {
			k = a.Name
		}
		return wireAction{Action: "key", Text: k}
	case computer.Scroll:
		dir, n := "down", a.DY
		if n < 0 {
			dir, n = "up", -n
		}
		return wireAction{Action: "scroll", ScrollDirection: dir, ScrollAmount: max(1, n/scrollStep)}
	}
	return wireAction{Action: "wait", Duration: 1}
}

// mapComputerResponse turns the model's tool_use blocks of the computer
// tool into calls of rein's action tools, their coordinates scaled from
// the w×h image it saw back to the screen's sw×sh. An action rein does not
// offer (double_click, drag, ...) becomes a call of a tool of that name,
// which the availability gate refuses, telling the model which tools exist.
// No tool_use means the model is done: its text is the answer.
func mapComputerResponse(msg *sdk.Message, sw, sh, w, h int) (*model.Response, error) {
	if msg == nil {
		return nil, fmt.Errorf("%w: no message", provider.ErrBadResponse)
	}
	resp := &model.Response{StopReason: string(msg.StopReason), Usage: model.Usage{
		Input: max(0, msg.Usage.InputTokens), Output: max(0, msg.Usage.OutputTokens),
		CacheRead: max(0, msg.Usage.CacheReadInputTokens), CacheWrite: max(0, msg.Usage.CacheCreationInputTokens),
	}}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			if t := strings.TrimSpace(b.Text); t != "" {
				resp.Blocks = append(resp.Blocks, model.TextBlock(t))
			}
		case "tool_use":
			if b.Name == computer.PlanTool {
				resp.Blocks = append(resp.Blocks, model.CallBlock(model.ToolCall{ID: b.ID, Name: computer.PlanTool, Args: b.Input}))
				continue
			}
			if b.Name != computerToolName || sw == 0 {
				return nil, fmt.Errorf("%w: the model called tool %q; only %q is offered", provider.ErrBadResponse, b.Name, computerToolName)
			}
			var wa wireAction
			if err := json.Unmarshal(b.Input, &wa); err != nil {
				return nil, fmt.Errorf("%w: computer tool input: %v", provider.ErrBadResponse, err)
			}
			a, err := fromWire(wa, sw, sh, w, h)
			if err != nil {
				return nil, err
			}
			resp.Blocks = append(resp.Blocks, model.CallBlock(model.ToolCall{ID: b.ID, Name: string(a.Kind), Args: a.Args()}))
		}
	}
	model.UniqueCallIDs(resp.Blocks)
	return resp, nil
}

func fromWire(wa wireAction, sw, sh, w, h int) (computer.Action, error) {
	point := func() (int, int, error) {
		if len(wa.Coordinate) != 2 {
			return 0, 0, fmt.Errorf("%w: %s needs a coordinate [x, y]", provider.ErrBadResponse, wa.Action)
		}
		return wa.Coordinate[0] * sw / max(1, w), wa.Coordinate[1] * sh / max(1, h), nil
	}
	switch wa.Action {
	case "left_click":
		x, y, err := point()
		return computer.Action{Kind: computer.Click, X: x, Y: y}, err
	case "type":
		return computer.Action{Kind: computer.Type, Text: wa.Text}, nil
	case "key":
		name := toReinKey[strings.ToLower(wa.Text)]
		if name == "" {
			name = wa.Text // not a key rein presses: validation tells the model
		}
		return computer.Action{Kind: computer.Key, Name: name}, nil
	case "scroll":
		dy := max(1, wa.ScrollAmount) * scrollStep * sh / max(1, h)
		switch wa.ScrollDirection {
		case "up":
			dy = -dy
		case "down":
		default:
			return computer.Action{}, fmt.Errorf("%w: scroll %q: rein scrolls up or down only", provider.ErrBadResponse, wa.ScrollDirection)
		}
		return computer.Action{Kind: computer.Scroll, DY: dy}, nil
	case "wait", "screenshot", "mouse_move", "cursor_position":
		// Nothing to do: the loop takes a new screenshot after every step.
		return computer.Action{Kind: computer.Wait}, nil
	}
	// double_click, drag, right_click, ...: rein offers no such action. A
	// call of that name goes to the loop, whose availability gate refuses
	// it and tells the model to use the tools it was given.
	return computer.Action{Kind: computer.Kind(wa.Action)}, nil
}

// scaleScreenshot returns the PNG to send and its size: the screenshot as it
// is when it fits MaxScreenWidth×MaxScreenHeight, else scaled down to fit
// (box filter), keeping the aspect.
func scaleScreenshot(s computer.Screenshot) ([]byte, int, int, error) {
	if s.Width <= MaxScreenWidth && s.Height <= MaxScreenHeight {
		return s.PNG, s.Width, s.Height, nil
	}
	src, err := png.Decode(bytes.NewReader(s.PNG))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("decode the screenshot: %w", err)
	}
	f := min(float64(MaxScreenWidth)/float64(s.Width), float64(MaxScreenHeight)/float64(s.Height))
	w, h := max(1, int(float64(s.Width)*f)), max(1, int(float64(s.Height)*f))
	b := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		y0, y1 := b.Min.Y+y*b.Dy()/h, b.Min.Y+max((y+1)*b.Dy()/h, y*b.Dy()/h+1)
		for x := range w {
			x0, x1 := b.Min.X+x*b.Dx()/w, b.Min.X+max((x+1)*b.Dx()/w, x*b.Dx()/w+1)
			var r, g, bl, a, n uint32
			for yy := y0; yy < y1; yy++ {
				for xx := x0; xx < x1; xx++ {
					cr, cg, cb, ca := src.At(xx, yy).RGBA()
					r, g, bl, a, n = r+cr, g+cg, bl+cb, a+ca, n+1
				}
			}
			dst.Set(x, y, color.RGBA64{uint16(r / n), uint16(g / n), uint16(bl / n), uint16(a / n)})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, dst); err != nil {
		return nil, 0, 0, fmt.Errorf("encode the scaled screenshot: %w", err)
	}
	return buf.Bytes(), w, h, nil
}
