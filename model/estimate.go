package model

import "unicode/utf8"

// CharsPerToken is the rough ratio rein uses when a provider reports no usage.
const CharsPerToken = 4

// EstimateTokens estimates the tokens of a whole request as its characters
// divided by CharsPerToken, rounded up: the system text, every tool definition
// and every message. Because the whole conversation is counted, the estimate
// grows with each turn, as real billing does when a conversation is re-sent.
func EstimateTokens(req *Request) int64 {
	n := utf8.RuneCountInString(req.System)
	for _, t := range req.Tools {
		n += utf8.RuneCountInString(t.Name) + utf8.RuneCountInString(t.Description) + utf8.RuneCount(t.Schema)
	}
	for _, m := range req.Messages {
		n += blockChars(m.Blocks)
	}
	return tokens(n)
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
