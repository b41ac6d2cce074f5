package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/tool"
)

// shoutArgs are shout's arguments: the schema is checked first, then the
// JSON is decoded into this struct.
type shoutArgs struct {
	Text  string `json:"text"`
	Times int    `json:"times"`
}

// A caller's own tool: typed arguments, a JSON Schema, and the effect class
// the gates judge it by (read-only here: it changes nothing).
func ExampleNew() {
	shout := tool.New(tool.Spec{
		Name:        "shout",
		Description: "Repeats text in capitals.",
		Schema: json.RawMessage(`{"type":"object","properties":{
		  "text":{"type":"string"},"times":{"type":"integer","minimum":1,"maximum":3}},
		  "required":["text","times"],"additionalProperties":false}`),
		Effect: tool.ReadOnly,
	}, func(_ context.Context, a shoutArgs) (string, error) {
		return strings.TrimSpace(strings.Repeat(strings.ToUpper(a.Text)+" ", a.Times)), nil
	})
	out, err := shout.Run(context.Background(), json.RawMessage(`{"text":"hi","times":2}`))
	fmt.Println(out, err)
	_, err = shout.Run(context.Background(), json.RawMessage(`{"text":"hi","times":9}`))
	fmt.Println(err != nil)
	// Output:
	// HI HI <nil>
	// true
}
