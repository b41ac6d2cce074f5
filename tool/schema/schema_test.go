package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/tool/schema"
)

const readFile = `{
  "type": "object",
  "properties": {
    "path":   {"type": "string", "minLength": 1, "maxLength": 4096},
    "offset": {"type": "integer", "minimum": 1, "maximum": 1000000},
    "mode":   {"enum": ["a", "b"]}
  },
  "required": ["path"],
  "additionalProperties": false
}`

func TestValidate(t *testing.T) {
	t.Parallel()
	s := schema.MustCompile("read_file", []byte(readFile))
	for _, c := range []struct {
		args string
		want string // "" = valid
	}{
		{`{"path":"a.txt"}`, ""},
		{`{"path":"a.txt","offset":1000000,"mode":"b"}`, ""},
		{`{"path":""}`, `"path" is empty`},
		{`{}`, `"path" is required`},
		{`{"path":"a","PATH":"b"}`, `unknown field "PATH"`},
		{`{"path":"a","offset":1000001}`, `"offset" is 1000001: it must be at most 1000000`},
		{`{"path":"a","offset":1.5}`, `"offset" must be a whole number, got number`},
		{`{"path":"a","offset":"3"}`, `"offset" must be a whole number, got string`},
		{`{"path":"a","mode":"c"}`, `"mode" is c: it must be one of a, b`},
		{`[1]`, "expected object, got array"},
		{`{"path":`, "not valid JSON"},
	} {
		err := s.Validate([]byte(c.args))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.args, err)
		case c.want != "" && (err == nil || !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

func TestCompileRejectsBadSchemas(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`{`, `{"type":"nope"}`, `{"minLength":-1}`} {
		if _, err := schema.Compile("t", []byte(raw)); err == nil {
			t.Errorf("%s compiled", raw)
		}
	}
}

func FuzzValidate(f *testing.F) {
	s := schema.MustCompile("read_file", []byte(readFile))
	for _, seed := range []string{`{"path":"a"}`, `{}`, `[`, `{"path":"a","offset":1e400}`, `null`, `{"path":"\ud800"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		err := s.Validate(doc)
		if err != nil && !errors.Is(err, schema.ErrInvalid) {
			t.Fatalf("error does not wrap ErrInvalid: %v", err)
		}
	})
}

// CompileLazily refuses exactly the documents Compile refuses, with the
// same message, and judges arguments exactly as Compile's schema does;
// only a document outside the fast subset is compiled by jsonschema at
// once.
func TestCompileLazily(t *testing.T) {
	t.Parallel()
	docs := []struct {
		name, doc string
		lazy      bool // within the subset: jsonschema not run at compile time
	}{
		{"read_file", readFile, true},
		{"nested", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"},"maxItems":3},"n":{"type":"number","minimum":0}},"required":["tags"]}`, true},
		{"examples", `{"type":"object","properties":{"a":{"type":"string","examples":["x"],"default":"x","title":"A"}}}`, true},
		{"bad type", `{"type":"object","properties":{"a":{"type":"nonsense"}}}`, false},
		{"description not a string", `{"type":"object","properties":{"a":{"type":"string","description":3}}}`, false},
		{"examples not an array", `{"type":"object","properties":{"a":{"type":"string","examples":"x"}}}`, false},
		{"duplicate required", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","a"]}`, false},
		{"negative length", `{"type":"object","properties":{"a":{"type":"string","minLength":-1}}}`, false},
		{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`, false},
		{"outside the subset", `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`, false},
		{"not JSON", `{"type":`, false},
	}
	args := []string{`{}`, `{"path":"a"}`, `{"path":""}`, `{"path":"a","extra":1}`, `{"tags":["ab","c"]}`, `{"tags":["AB"]}`,
		`{"tags":["a","b","c","d"]}`, `{"n":-1}`, `{"a":"x"}`, `{"a":3}`, `{"offset":0,"path":"p"}`, `{"mode":"c","path":"p"}`}
	for _, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			eager, eerr := schema.Compile(d.name, []byte(d.doc))
			lazy, lerr := schema.NewCompiler().CompileLazily(d.name, []byte(d.doc))
			if (eerr == nil) != (lerr == nil) || (eerr != nil && eerr.Error() != lerr.Error()) {
				t.Fatalf("Compile: %v; CompileLazily: %v", eerr, lerr)
			}
			if eerr != nil {
				return
			}
			if got := !lazy.Compiled(); got != d.lazy {
				t.Errorf("compilation deferred: %v, want %v", got, d.lazy)
			}
			for _, a := range args {
				e, l := eager.Validate([]byte(a)), lazy.Validate([]byte(a))
				if (e == nil) != (l == nil) || (e != nil && e.Error() != l.Error()) {
					t.Errorf("%s: Compile's schema says %v, CompileLazily's %v", a, e, l)
				}
			}
		})
	}
}
