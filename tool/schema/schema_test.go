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
