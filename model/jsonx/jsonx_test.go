package jsonx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/reinhq/rein/model/jsonx"
)

type inner struct {
	C string `json:"c"`
}

type target struct {
	A int            `json:"a"`
	B inner          `json:"b"`
	L []int          `json:"l"`
	F float64        `json:"f"`
	T bool           `json:"t"`
	M map[string]int `json:"m"`
	S string         `json:"s"`
}

func TestDecodeStrictOK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want target
	}{
		{"empty object", `{}`, target{}},
		{"all fields", `{"a":-1,"b":{"c":"x"},"l":[1,2],"f":1.5,"t":true,"m":{"k":2},"s":"é"}`,
			target{A: -1, B: inner{C: "x"}, L: []int{1, 2}, F: 1.5, T: true, M: map[string]int{"k": 2}, S: "é"}},
		{"surrounding whitespace", " \n\t{\"a\":1}\r\n ", target{A: 1}},
		{"null leaves zero", `{"a":null}`, target{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got target
			if err := jsonx.DecodeStrict([]byte(tt.in), &got); err != nil {
				t.Fatalf("DecodeStrict(%q) = %v", tt.in, err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tt.want)
			if string(gj) != string(wj) {
				t.Errorf("DecodeStrict(%q) = %s, want %s", tt.in, gj, wj)
			}
		})
	}
}

func TestDecodeStrictErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string // substrings the message must contain
	}{
		// Unknown fields.
		{"unknown field", `{"x":1}`, []string{`unknown field "x"`}},
		{"unknown nested field", `{"b":{"c":"", "d":1}}`, []string{`unknown field "d"`}},
		{"unknown field after known", `{"a":1,"x":2}`, []string{`unknown field "x"`}},

		// Trailing data: the position is where the trailing data starts.
		{"trailing word", `{"a":1} x`, []string{"line 1, column 9", "unexpected data after the JSON value"}},
		{"trailing object", `{"a":1} {}`, []string{"line 1, column 9", "unexpected data after the JSON value"}},
		{"second value glued", `{"a":1}{"a":2}`, []string{"line 1, column 8", "unexpected data"}},
		{"trailing number", `{"a":1} 5`, []string{"line 1, column 9", "unexpected data"}},
		{"trailing string", `{"a":1} "s"`, []string{"line 1, column 9", "unexpected data"}},
		{"trailing on a later line", "{\"a\":1}\n\n  ]", []string{"line 3, column 3", "unexpected data"}},

		// Wrong types name the field and the wanted type.
		{"string for int", `{"a":"x"}`, []string{`"a"`, "a whole number", "not a JSON string"}},
		{"fraction for int", `{"a":1.5}`, []string{`"a"`, "a whole number", "number 1.5"}},
		{"overflowing int", `{"a":1e999}`, []string{`"a"`, "a whole number"}},
		{"number for string", "{\n\"b\":{\"c\":5}}", []string{"line 2,", `"b.c"`, "a string", "not a JSON number"}},
		{"object for array", `{"l":{}}`, []string{`"l"`, "an array", "not a JSON object"}},
		{"string for float", `{"f":"1"}`, []string{`"f"`, "a number", "not a JSON string"}},
		{"number for bool", `{"t":1}`, []string{`"t"`, "true or false", "not a JSON number"}},
		{"array for map", `{"m":[]}`, []string{`"m"`, "an object", "not a JSON array"}},
		{"array for struct", `{"b":[]}`, []string{`"b"`, "an object", "not a JSON array"}},
		{"array at top", `[1]`, []string{"the value must be an object", "not a JSON array"}},
		{"string at top", `"s"`, []string{"the value must be an object", "not a JSON string"}},

		// Syntax errors point at the offending character (1-based).
		{"trailing comma", `{"a":1,}`, []string{"line 1, column 8:", "invalid character '}'"}},
		{"missing colon", `{"a" 1}`, []string{"line 1, column 6:", "invalid character '1'"}},
		{"first character", `@`, []string{"line 1, column 1:", "invalid character '@'"}},
		{"multi-line trailing comma", "{\n  \"a\": 1,\n  }", []string{"line 3, column 3:", "invalid character '}'"}},
		{"after blank lines", "\n\n   @", []string{"line 3, column 4:", "invalid character '@'"}},
		{"bad literal on line 2", "{\n\"a\": tru }", []string{"line 2, column 9:", "invalid character ' '"}},
		{"control character in string", "{\"s\":\"a\tb\"}", []string{"line 1, column 8:", "in string literal"}},
		{"crlf lines", "{\r\n\"a\":1,\r\n}", []string{"line 3, column 1:"}},

		// Truncated input points just past the end.
		{"ends early", `{"a":`, []string{"line 1, column 6", "ends too early"}},
		{"ends early multi-line", "{\n\"a\":", []string{"line 2, column 5", "ends too early"}},
		{"truncated literal", `nul`, []string{"line 1, column 4", "ends too early"}},

		// Keys encoding/json would take for one field (it keeps the last).
		{"duplicate key", `{"a":1,"a":2}`, []string{"line 1, column 8:", `key "a" appears twice in one object`}},
		{"keys differing in case", `{"s":"x","S":"y"}`, []string{"line 1, column 10:", `keys "s" and "S" name the same field`}},
		{"keys folding to one", `{"s":"x","ſ":"y"}`, []string{`keys "s" and "ſ" name the same field`}},
		{"escaped duplicate", `{"s":"x","\u0073":"y"}`, []string{"line 1, column 10:", `key "s" appears twice`}},
		{"duplicate with escaped quote", `{"m":{"a\"b":1,"a\"b":2}}`, []string{"line 1, column 16:", `key "a\"b" appears twice`}},
		{"nested duplicate", "{\"b\":{\"c\":\"x\",\n \"C\":\"y\"}}", []string{"line 2, column 2:", `keys "c" and "C"`}},
		{"duplicate after an array", `{"l":[1,2],"b":{"c":""},"m":{"k":1,"k":2}}`, []string{`key "k" appears twice`}},
		{"duplicate in a map", `{"m":{"k":1,"K":2}}`, []string{`keys "k" and "K"`}},

		// Empty input.
		{"empty", ``, []string{"empty input"}},
		{"only space", " \n\t ", []string{"empty input"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var v target
			err := jsonx.DecodeStrict([]byte(tt.in), &v)
			if err == nil {
				t.Fatalf("DecodeStrict(%q) = nil, want an error", tt.in)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("DecodeStrict(%q) = %q, want it to contain %q", tt.in, msg, w)
				}
			}
			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("DecodeStrict(%q) = %q: message spans lines", tt.in, msg)
			}
		})
	}
}

func TestDecodeStrictKeysNotDuplicates(t *testing.T) {
	t.Parallel()
	tests := []string{
		`{"b":{"c":"x"},"m":{"c":1}}`,                     // the same key in two objects
		`{"l":[1,2],"m":{"l":1}}`,                         // a key of the parent reused in a child
		`{"s":"{\"a\":1,\"a\":2}"}`,                       // keys inside a string are not keys
		`{"m":{"a":1,"b":2},"b":{"c":"a"},"s":"a","a":1}`, // values equal to keys
	}
	for _, in := range tests {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			var v target
			if err := jsonx.DecodeStrict([]byte(in), &v); err != nil {
				t.Errorf("DecodeStrict(%s) = %v, want nil", in, err)
			}
		})
	}
	var arr []map[string]int
	if err := jsonx.DecodeStrict([]byte(`[{"a":1},{"a":2},{"A":3}]`), &arr); err != nil {
		t.Errorf("objects in an array with the same keys: %v", err)
	}
	var anyv any
	if err := jsonx.DecodeStrict([]byte(`[{"a":{"a":{"a":1}}},{"a":[{"a":1,"b":2}]}]`), &anyv); err != nil {
		t.Errorf("nested objects with the same keys: %v", err)
	}
	if err := jsonx.DecodeStrict([]byte(`[{"a":1},{"a":{"x":1,"x":2}}]`), &anyv); err == nil {
		t.Error("a duplicate deep inside an array was not found")
	}
}

func TestExplain(t *testing.T) {
	t.Parallel()
	other := errors.New("something else")
	tests := []struct {
		name string
		data string
		err  error
		want string
	}{
		{"eof", "", io.EOF, "empty input: expected a JSON value"},
		{"unexpected eof", "{\n\"a\"", io.ErrUnexpectedEOF, "line 2, column 4: the JSON ends too early (a missing bracket, brace or quote?)"},
		{"syntax error from Unmarshal", `{"a":1,}`, unmarshalErr(`{"a":1,}`), "line 1, column 8: invalid character '}' looking for beginning of object key string"},
		{"eof from Unmarshal", "{\n\"a\":", unmarshalErr("{\n\"a\":"), "line 2, column 5: the JSON ends too early (a missing bracket, brace or quote?)"},
		{"other errors pass through", "{}", other, "something else"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := jsonx.Explain([]byte(tt.data), tt.err)
			if got == nil || got.Error() != tt.want {
				t.Errorf("Explain(%q, %v) = %v, want %q", tt.data, tt.err, got, tt.want)
			}
		})
	}
	if got := jsonx.Explain(nil, other); !errors.Is(got, other) {
		t.Errorf("Explain of an unknown error = %v, want the error itself", got)
	}
}

func unmarshalErr(s string) error {
	var v any
	return json.Unmarshal([]byte(s), &v)
}

func TestPosition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		data      string
		off       int64
		line, col int
	}{
		{"offset 0", "abc", 0, 1, 1},
		{"offset 0 of empty", "", 0, 1, 1},
		{"middle of line 1", "abc", 2, 1, 3},
		{"end of line 1", "abc", 3, 1, 4},
		{"at the newline", "ab\ncd", 2, 1, 3},
		{"right after a newline", "ab\ncd", 3, 2, 1},
		{"line 2", "ab\ncd", 4, 2, 2},
		{"two newlines", "a\n\nb", 3, 3, 1},
		{"empty line", "a\n\nb", 2, 2, 1},
		{"leading newline", "\nx", 1, 2, 1},
		{"past the end clamps", "ab\ncd", 99, 2, 3},
		{"past the end of empty", "", 5, 1, 1},
		{"negative clamps to 0", "ab", -3, 1, 1},
		{"ends with newline, at end", "ab\n", 3, 2, 1},
		{"columns count bytes", "é\nx", 2, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			line, col := jsonx.Position([]byte(tt.data), tt.off)
			if line != tt.line || col != tt.col {
				t.Errorf("Position(%q, %d) = %d:%d, want %d:%d", tt.data, tt.off, line, col, tt.line, tt.col)
			}
		})
	}
}

func TestKindAndIsObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		kind   string
		object bool
	}{
		{`{}`, "object", true},
		{`{"a":[1,{"b":null}]}`, "object", true},
		{" \n\t\r{ } \n", "object", true},
		{`[]`, "array", false},
		{` [{}]`, "array", false},
		{`"x"`, "string", false},
		{`"{"`, "string", false},
		{`0`, "number", false},
		{`-1.5e3`, "number", false},
		{`true`, "boolean", false},
		{`false`, "boolean", false},
		{`null`, "null", false},
		{``, "invalid JSON", false},
		{`   `, "invalid JSON", false},
		{`{`, "invalid JSON", false},
		{`{"a":}`, "invalid JSON", false},
		{`{} {}`, "invalid JSON", false},
		{`{}x`, "invalid JSON", false},
		{`nul`, "invalid JSON", false},
		{`'a'`, "invalid JSON", false},
		{"{\"a\":\"\xff\"}", "object", true}, // encoding/json accepts invalid UTF-8 in strings
		{"\u00a0{}", "invalid JSON", false},  // no-break space is not JSON space
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := jsonx.Kind([]byte(tt.in)); got != tt.kind {
				t.Errorf("Kind(%q) = %q, want %q", tt.in, got, tt.kind)
			}
			if got := jsonx.IsObject([]byte(tt.in)); got != tt.object {
				t.Errorf("IsObject(%q) = %v, want %v", tt.in, got, tt.object)
			}
		})
	}
}

func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1,"b":{"c":"x"},"l":[1],"f":1,"t":true,"m":{"k":1},"s":"y"}`,
		`{"a":"x"}`, `{"x":1}`, `{"a":1} x`, "{\n\"a\":1,\n}", `{"a":`, ``, `[1]`, `{"a":1e999}`,
		"{\"s\":\"a\nb\"}", "{\"x\\n\":1}", "{\"m\":{\"\\n\":\"\"}}", `{"b":{"c":"\u2028"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v target
		err := jsonx.DecodeStrict(data, &v)
		if err == nil {
			// What strict decoding accepts, plain decoding reads the same way.
			var plain target
			if err := json.Unmarshal(data, &plain); err != nil {
				t.Fatalf("DecodeStrict(%q) succeeded but json.Unmarshal failed: %v", data, err)
			}
			sj, _ := json.Marshal(v)
			pj, _ := json.Marshal(plain)
			if string(sj) != string(pj) {
				t.Fatalf("DecodeStrict(%q) = %s, json.Unmarshal = %s", data, sj, pj)
			}
			return
		}
		msg := err.Error()
		if msg == "" {
			t.Fatalf("DecodeStrict(%q) returned an empty error", data)
		}
		if strings.ContainsAny(msg, "\r\n") {
			t.Fatalf("DecodeStrict(%q) = %q: message spans lines", data, msg)
		}
	})
}

// refDuplicate is the slow, obvious duplicate-key check (json.Decoder.Token)
// that CheckKeys's byte scan must agree with.
func refDuplicate(data []byte) bool {
	type level struct {
		keys []string
		obj  bool
		key  bool
	}
	var stack []level
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{obj: true, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].key {
				k := tok.(string)
				for _, p := range stack[n-1].keys {
					if strings.EqualFold(p, k) {
						return true
					}
				}
				stack[n-1].keys = append(stack[n-1].keys, k)
				stack[n-1].key = false
				continue
			}
		}
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].key = true
		}
	}
}

func FuzzCheckKeys(f *testing.F) {
	for _, s := range []string{`{"a":1,"A":2}`, `{"a":{"b":1},"b":2}`, `[{"x":"\"y\"","x":1}]`, `{"\u0061":1,"a":2}`,
		`{"k":"K","K":1}`, `{"a":[{"a":1},{"a":2}]}`, `{"ſ":1,"S":2}`, `"x"`, `{"a\\":1,"a\\\\":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		if got, want := jsonx.CheckKeys(data) != nil, refDuplicate(data); got != want {
			t.Fatalf("CheckKeys says duplicate=%v, the reference %v, for %s", got, want, data)
		}
	})
}
