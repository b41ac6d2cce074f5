package serve

import (
	"encoding/json"
	"testing"
)

// TestPrettyArgs: a person reads the arguments as the model wrote them —
// the HTML escapes a JSON encoder adds are undone (the page's template
// escapes for HTML), every other escape stays, and what a reader could
// be fooled by is made visible.
func TestPrettyArgs(t *testing.T) {
	for _, c := range []struct{ name, raw, want string }{
		{"encoder's html escapes", `{"a":"\u003cscript\u003e \u0026 \u003e"}`, "{\n  \"a\": \"<script> & >\"\n}"},
		{"upper-case hex", `{"a":"\u003Cb\u003E"}`, "{\n  \"a\": \"<b>\"\n}"},
		{"escaped backslash before u003c stays", `{"a":"\\u003c"}`, "{\n  \"a\": \"\\\\u003c\"\n}"},
		{"other escapes stay", `{"a":"\"\n\u001b\u0007"}`, "{\n  \"a\": \"\\\"\\n\\u001b\\u0007\"\n}"},
		{"a raw bidi override is shown", "{\"a\":\"\u202etxt\"}", "{\n  \"a\": \"\\u202etxt\"\n}"},
		{"nesting keeps its indentation", `{"a":{"b":[1,"x      y"]}}`, "{\n  \"a\": {\n    \"b\": [\n      1,\n      \"x␠×6y\"\n    ]\n  }\n}"},
		{"not JSON: shown as it is, made visible", "<b>\x1b[2J", "<b>\\x1b[2J"},
		{"a lone backslash at the end", `\`, `\`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := prettyArgs(json.RawMessage(c.raw)); got != c.want {
				t.Errorf("prettyArgs(%q) = %q, want %q", c.raw, got, c.want)
			}
		})
	}
}
