package model

import (
	"bytes"
	"image"
	_ "image/gif"  // image sizes for the estimate
	_ "image/jpeg" // image sizes for the estimate
	_ "image/png"  // image sizes for the estimate
	"unicode/utf8"
)

// CharsPerToken is the rough ratio rein uses when a provider reports no usage.
const CharsPerToken = 4

// EstimateTokens estimates the tokens of a whole request as its characters
// divided by CharsPerToken, rounded up: the system text, every tool definition
// and every message; plus ImageTokens for each image. Because the whole conversation is counted, the estimate
// grows with each turn, as real billing does when a conversation is re-sent.
func EstimateTokens(req *Request) int64 {
	n := utf8.RuneCountInString(req.System)
	for _, t := range req.Tools {
		n += utf8.RuneCountInString(t.Name) + utf8.RuneCountInString(t.Description) + utf8.RuneCount(t.Schema)
	}
	var img int64
	for _, m := range req.Messages {
		n += blockChars(m.Blocks)
		img += blockImages(m.Blocks)
	}
	return tokens(n) + img
}

// ImageTokens estimates the tokens of an image as its width×height/750
// (Anthropic's rule); an image whose size cannot be read counts as 1,000×1,000.
func ImageTokens(img Image) int64 {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil {
		return 1000 * 1000 / 750
	}
	return int64(cfg.Width) * int64(cfg.Height) / 750
}

func blockImages(blocks []Block) int64 {
	var n int64
	for _, b := range blocks {
		switch {
		case b.Kind == KindImage && b.Image != nil:
			n += ImageTokens(*b.Image)
		case b.Kind == KindToolResult && b.Result != nil:
			for _, img := range b.Result.Images {
				n += ImageTokens(img)
			}
		}
	}
	return n
}

// EstimateOutputTokens estimates the tokens of a response's content.
func EstimateOutputTokens(blocks []Block) int64 { return tokens(blockChars(blocks)) }

func blockChars(blocks []Block) int {
	n := 0
	for _, b := range blocks {
		switch b.Kind {
		case KindText:
			n += utf8.RuneCountInString(b.Text)
		case KindToolCall:
			if b.Call != nil {
				n += utf8.RuneCountInString(b.Call.Name) + utf8.RuneCount(b.Call.Args)
			}
		case KindToolResult:
			if b.Result != nil {
				n += utf8.RuneCountInString(b.Result.Content)
			}
		case KindOpaque:
			if b.Opaque != nil {
				n += utf8.RuneCount(b.Opaque.Data)
			}
		}
	}
	return n
}

func tokens(chars int) int64 { return int64((chars + CharsPerToken - 1) / CharsPerToken) }

// Estimator is EstimateTokens for a conversation that grows: it remembers
// what it counted for the system text, the tool definitions and each message,
// and counts again only what is new or was replaced. A session's requests
// share their earlier messages (the same block slices, appended to), so each
// step costs what its new messages cost instead of the whole conversation
// again. The estimate is exactly EstimateTokens(req) as long as no block
// slice is changed in place after it was counted; a message rebuilt into a
// new slice (as compaction and rendering do) is simply counted anew.
//
// The zero value is ready to use; an Estimator is not safe for concurrent
// use.
type Estimator struct {
	system    string
	sysChars  int
	tools     *ToolDef
	nTools    int
	toolChars int
	msgs      []counted
}

// counted is what an Estimator remembers of one message: its block slice
// (first element and length) and what it counted there.
type counted struct {
	first *Block
	n     int
	chars int
	img   int64
}

// Estimate returns EstimateTokens(req), counting only what changed since
// the last call.
func (e *Estimator) Estimate(req *Request) int64 {
	if req.System != e.system {
		e.system = req.System
		e.sysChars = utf8.RuneCountInString(req.System)
	}
	if first := firstTool(req.Tools); first != e.tools || len(req.Tools) != e.nTools || first == nil {
		e.tools, e.nTools, e.toolChars = first, len(req.Tools), 0
		for _, t := range req.Tools {
			e.toolChars += utf8.RuneCountInString(t.Name) + utf8.RuneCountInString(t.Description) + utf8.RuneCount(t.Schema)
		}
	}
	n := e.sysChars + e.toolChars
	var img int64
	for i, m := range req.Messages {
		first := firstBlock(m.Blocks)
		if i >= len(e.msgs) || e.msgs[i].first != first || e.msgs[i].n != len(m.Blocks) || first == nil {
			e.msgs = append(e.msgs[:i], counted{first: first, n: len(m.Blocks), chars: blockChars(m.Blocks), img: blockImages(m.Blocks)})
		}
		n += e.msgs[i].chars
		img += e.msgs[i].img
	}
	e.msgs = e.msgs[:len(req.Messages)]
	return tokens(n) + img
}

func firstTool(t []ToolDef) *ToolDef {
	if len(t) == 0 {
		return nil
	}
	return &t[0]
}

func firstBlock(b []Block) *Block {
	if len(b) == 0 {
		return nil
	}
	return &b[0]
}
