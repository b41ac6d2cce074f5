package schema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/desk"
	"github.com/reinhq/rein/tool/schema"
)

// builtins returns the compiled schema of every built-in tool, by name, in
// a fixed order (the registry's, sorted).
func builtins(tb testing.TB) ([]string, []*schema.Schema) {
	tb.Helper()
	reg, err := harness.Tools(harness.Env{Extra: deskTools()})
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	var schemas []*schema.Schema
	for _, n := range reg.Names() {
		t, _ := reg.Lookup(n)
		if len(t.Spec().Schema) == 0 {
			continue
		}
		names = append(names, n)
		schemas = append(schemas, schema.MustCompile(n, t.Spec().Schema))
	}
	if len(schemas) < 15 {
		tb.Fatalf("only %d built-in schemas: the registry changed", len(schemas))
	}
	return names, schemas
}

// TestFastCoversBuiltins: every built-in tool's schema is within the fast
// validator's subset, so no call pays for jsonschema unless it is refused.
func TestFastCoversBuiltins(t *testing.T) {
	t.Parallel()
	names, schemas := builtins(t)
	for i, s := range schemas {
		if has, _ := s.Fast(map[string]any{}); !has {
			t.Errorf("%s: no fast validator; its schema uses a keyword fast.go does not implement", names[i])
		}
	}
}

// TestFastLeavesOthersToJSONSchema: a schema with any keyword outside the
// subset, or a keyword used outside the subset's forms, gets no fast
// validator, so jsonschema alone decides.
func TestFastLeavesOthersToJSONSchema(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`{"type":"object","oneOf":[{"required":["a"]}]}`,
		`{"type":"object","additionalProperties":true}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":["string","null"]}`,
		`{"type":"string","const":"a"}`,
		`{"enum":[1,2]}`,
		`{"type":"string","format":"email"}`,
		`{"type":"integer","minimum":0.1}`,
		`{"type":"integer","maximum":9007199254740993}`,
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`,
		`{"type":"object","properties":{"a":true}}`,
		`{"type":"array","prefixItems":[{"type":"string"}]}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
		`{"type":"integer","exclusiveMinimum":0}`,
	} {
		s, err := schema.Compile("t", []byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if has, _ := s.Fast(nil); has {
			t.Errorf("%s: got a fast validator", raw)
		}
	}
}

// subset exercises every keyword of the fast subset at once.
const subset = `{
  "type": "object",
  "properties": {
    "s":   {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-zé]"},
    "i":   {"type": "integer", "minimum": -3, "maximum": 600},
    "n":   {"type": "number", "minimum": 0.5, "maximum": 1e3},
    "b":   {"type": "boolean"},
    "e":   {"type": "string", "enum": ["x", "y"]},
    "oe":  {"type": "object", "enum": ["x"]},
    "any": {"description": "no type: anything"},
    "nul": {"type": "null"},
    "arr": {"type": "array", "minItems": 1, "maxItems": 2,
            "items": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false}},
    "open": {"type": "object", "properties": {"k": {"type": "string"}}}
  },
  "required": ["s"],
  "additionalProperties": false
}`

// TestFastAgrees checks the fast validator against jsonschema on chosen
// edges of each keyword.
func TestFastAgrees(t *testing.T) {
	t.Parallel()
	s := schema.MustCompile("subset", []byte(subset))
	for _, doc := range []string{
		`{"s":"ab"}`, `{"s":"a"}`, `{"s":"abcd"}`, `{"s":"abcde"}`, `{"s":"éééé"}`, `{"s":"ééééé"}`,
		`{"s":"Ab"}`, `{"s":"\u00e9b"}`, `{"s":"a\ud800"}`, `{"s":"ab\u0000"}`, `{}`, `{"S":"ab"}`,
		`{"s":"ab","i":600}`, `{"s":"ab","i":601}`, `{"s":"ab","i":-3}`, `{"s":"ab","i":-4}`,
		`{"s":"ab","i":5.0}`, `{"s":"ab","i":5.5}`, `{"s":"ab","i":1e2}`, `{"s":"ab","i":-0}`,
		`{"s":"ab","i":600.0000000000001}`, `{"s":"ab","i":1e308}`, `{"s":"ab","i":"5"}`, `{"s":"ab","i":null}`,
		`{"s":"ab","n":0.5}`, `{"s":"ab","n":0.49999999999999994}`, `{"s":"ab","n":1000}`, `{"s":"ab","n":1000.0000000000001}`,
		`{"s":"ab","n":7}`, `{"s":"ab","n":true}`,
		`{"s":"ab","b":false}`, `{"s":"ab","b":0}`, `{"s":"ab","e":"x"}`, `{"s":"ab","e":"z"}`, `{"s":"ab","e":1}`,
		`{"s":"ab","oe":{}}`, `{"s":"ab","oe":"x"}`,
		`{"s":"ab","any":[1,{"a":null}]}`, `{"s":"ab","nul":null}`, `{"s":"ab","nul":0}`,
		`{"s":"ab","arr":[{"id":"a"}]}`, `{"s":"ab","arr":[]}`, `{"s":"ab","arr":[{"id":"a"},{"id":"b"},{"id":"c"}]}`,
		`{"s":"ab","arr":[{"id":1}]}`, `{"s":"ab","arr":[{}]}`, `{"s":"ab","arr":[{"id":"a","x":1}]}`, `{"s":"ab","arr":{}}`,
		`{"s":"ab","open":{"k":"v","other":[1]}}`, `{"s":"ab","open":{"k":2}}`, `{"s":"ab","open":[]}`,
		`[]`, `"ab"`, `null`, `1`,
	} {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		agree(t, "subset", s, doc, v)
	}
}

// agree fails when the fast validator and jsonschema answer differently.
func agree(t *testing.T, name string, s *schema.Schema, doc string, v any) {
	t.Helper()
	has, fast := s.Fast(v)
	if !has {
		t.Fatalf("%s: no fast validator", name)
	}
	full := s.Full(v)
	if fast != (full == nil) {
		t.Errorf("%s: %s: fast says valid=%v, jsonschema says %v", name, doc, fast, full)
	}
}

// FuzzFastAgrees is the differential test: on any JSON document, for every
// built-in tool's schema, the fast validator accepts exactly what
// jsonschema accepts. Seeds are valid and near-valid arguments of each tool
// (and testdata/fuzz/FuzzFastAgrees).
//
//	go test -run '^$' -fuzz FuzzFastAgrees ./tool/schema
func FuzzFastAgrees(f *testing.F) {
	names, schemas := builtins(f)
	for _, seed := range []string{
		`{"command":"ls -la","timeout_s":30,"workdir":"src"}`, `{"command":"x","timeout_s":600.0}`,
		`{"url":"https://example.com/"}`, `{"path":"a.txt","offset":1,"limit":2000}`, `{"path":"a","offset":1e6}`,
		`{"pattern":"**/*.go","path":"src"}`, `{"pattern":"/etc"}`, `{"pattern":"x","include":"*.go"}`,
		`{"order_id":"ZAM-4471"}`, `{"order_id":"zam-1"}`, `{"id":"a.b-c_1","status":"done","note":""}`,
		`{"items":[{"id":"a","title":"t"}]}`, `{"items":[]}`, `{"content":"","append":true}`,
		`{"to":"a@b.c","subject":"s","body":"b"}`, `{"address":"a@b.c","body":"hi"}`, `{"expression":"1+2"}`,
		`{"question":"why?"}`, `{"path":"a","old_string":"x","new_string":"","replace_all":false}`, `{}`,
		`{"command":"é\u00e9\ud83d\ude00"}`, `{"command":null}`, `[]`, `{"a":1}`,
	} {
		for i := range schemas {
			f.Add([]byte(seed), uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte, which uint8) {
		var v any
		if json.Unmarshal(doc, &v) != nil {
			return // not JSON: the gates never validate it as a value
		}
		i := int(which) % len(schemas)
		agree(t, names[i], schemas[i], strings.ToValidUTF8(string(doc), "?"), v)
	})
}

// deskTools are the support desk's tools, which the assembly no longer
// builds itself: a session gets them as caller-supplied tools.
func deskTools() []tool.Tool {
	s := desk.NewStore()
	return []tool.Tool{desk.OrderStatus(s), desk.SendReply(s)}
}
