package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/tool"
)

type readArgs struct{}

var readSchema = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

func (s *Session) scratchpadRead() tool.Tool {
	return tool.New(tool.Spec{
		Name: "scratchpad_read",
		Description: "Read your scratchpad: the notes you saved with scratchpad_write in this session. " +
			"Returns \"(empty)\" when there are none. It takes no arguments.",
		Schema: readSchema,
		Effect: tool.ReadOnly,
		Echoes: true, // the model's own notes: never a source, never an exemption
	}, func(context.Context, readArgs) (string, error) {
		if n := s.Notes(); n != "" {
			return n, nil
		}
		return "(empty)", nil
	})
}

// writeArgs are scratchpad_write's arguments.
type writeArgs struct {
	Content string `json:"content"`
	Append  bool   `json:"append"`
}

// Check bounds the content in bytes; the schema bounds it in characters.
func (a *writeArgs) Check() error {
	if len(a.Content) > MaxScratchpad {
		return fmt.Errorf(`"content" is %d bytes: the scratchpad holds at most %d; keep only what you need`, len(a.Content), MaxScratchpad)
	}
	return nil
}

var writeSchema = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
	`"content":{"type":"string","maxLength":%d,"description":"The notes. Empty with append false clears the scratchpad."},`+
	`"append":{"type":"boolean","description":"true adds content after the notes on a new line; false (the default) replaces them."}},`+
	`"required":["content"],"additionalProperties":false}`, MaxScratchpad))

func (s *Session) scratchpadWrite() tool.Tool {
	return tool.New(tool.Spec{
		Name: "scratchpad_write",
		Description: fmt.Sprintf("Save notes for yourself in this session's scratchpad: intermediate results, facts you found, what is left to do. "+
			"By default the content replaces the notes; with append true it is added on a new line after them. "+
			"The scratchpad holds at most %d bytes. Notes are private to this session and are not shown to anyone.", MaxScratchpad),
		Schema: writeSchema,
		Effect: tool.ReadOnly,
		Echoes: true, // the model's own notes: never a source, never an exemption
	}, func(ctx context.Context, a writeArgs) (string, error) {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		next := a.Content
		if a.Append && s.notes != "" && a.Content != "" {
			sep := ""
			if !strings.HasSuffix(s.notes, "\n") {
				sep = "\n"
			}
			next = s.notes + sep + a.Content
		} else if a.Append {
			next = s.notes + a.Content
		}
		if len(next) > MaxScratchpad {
			return "", fmt.Errorf("%w: appending would make the notes %d bytes, and the limit is %d. "+
				"Nothing was saved. Rewrite the scratchpad with append false, keeping only what you still need",
				ErrTooLarge, len(next), MaxScratchpad)
		}
		s.notes = next
		if next == "" {
			return "The scratchpad is empty.", nil
		}
		return fmt.Sprintf("Saved. The scratchpad holds %d of %d bytes.", len(next), MaxScratchpad), nil
	})
}
