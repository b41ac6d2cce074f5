package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/model"
)

// DefaultMaxResultBytes caps a tool result the model sees.
const DefaultMaxResultBytes = 32 << 10

// KeepMessages is how many of the newest messages compaction keeps (at
// least; it keeps more rather than separate a tool call from its result).
const KeepMessages = 6

// compact returns msgs with the middle replaced by a deterministic summary
// when their request (tokens, estimated) would be over 80% of maxTokens: the first message (the
// task) and the newest messages stay; what was dropped is described — how
// many messages, how many characters, which tools were called, the first 16
// hex digits of a SHA-256 of the dropped messages — with "re-read any file
// you need". The kept tail starts at an assistant message, so no tool call
// is separated from its result. It reports whether it compacted.
func compact(msgs []model.Message, tokens, maxTokens int64) ([]model.Message, bool) {
	if maxTokens <= 0 || tokens*10 <= maxTokens*8 || len(msgs) <= KeepMessages+1 {
		return msgs, false
	}
	cut := len(msgs) - KeepMessages
	for cut > 1 && msgs[cut].Role != model.RoleAssistant {
		cut-- // keep more rather than split a call from its result
	}
	if cut <= 1 {
		return msgs, false
	}
	dropped := msgs[1:cut]
	chars := 0
	tools := map[string]int{}
	h := sha256.New()
	for _, m := range dropped {
		b, _ := json.Marshal(m)
		h.Write(b)
		for _, bl := range m.Blocks {
			switch {
			case bl.Kind == model.KindText:
				chars += utf8.RuneCountInString(bl.Text)
			case bl.Kind == model.KindToolCall && bl.Call != nil:
				tools[bl.Call.Name]++
				chars += utf8.RuneCount(bl.Call.Args)
			case bl.Kind == model.KindToolResult && bl.Result != nil:
				chars += utf8.RuneCountInString(bl.Result.Content)
			}
		}
	}
	var called []string
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		called = append(called, fmt.Sprintf("%s ×%d", name, tools[name]))
	}
	if len(called) == 0 {
		called = []string{"none"}
	}
	summary := fmt.Sprintf("[context compacted: %d earlier messages (%d characters) were dropped to stay within the context budget; "+
		"tools called in them: %s; digest %s. Your scratchpad and todo list are intact; re-read any file you need.]",
		len(dropped), chars, strings.Join(called, ", "), hex.EncodeToString(h.Sum(nil))[:16])
	first := model.Message{Role: msgs[0].Role, Blocks: append(slices.Clone(msgs[0].Blocks), model.TextBlock(summary))}
	out := make([]model.Message, 0, len(msgs)-len(dropped))
	out = append(out, first)
	return append(out, msgs[cut:]...), true
}

// capResult cuts a tool result longer than maxBytes, on a rune boundary,
// and says how to read the rest.
func capResult(s string, maxBytes int) string {
	if maxBytes <= 0 || len(s) <= maxBytes {
		return s
	}
	n := maxBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("\n[cut: the result has %d bytes and only the first %d are shown. Read the rest in parts: read_file with offset and limit, grep for what you need, or a command that prints less (head, tail, wc).]", len(s), n)
}
