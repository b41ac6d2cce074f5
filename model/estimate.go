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
