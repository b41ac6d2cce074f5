package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"unicode/utf8"
)

// fast is a validator for the small subset of JSON Schema rein's own tools
// use: one "type", "properties", "required", "additionalProperties": false,
// "minLength", "maxLength", "pattern", "minimum", "maximum", an "enum" of
// strings, "items", "minItems", "maxItems", and the annotations
// "description", "title", "default", "examples".
//
// It answers only "valid": when it says a value is valid, jsonschema says
// so too (FuzzFastAgrees checks this on every built-in tool's schema).
// Anything else — an invalid value, a number as json.Number, a Go type JSON
// does not produce — goes to jsonschema, which decides and words the error,
// so the messages stay jsonschema's. A schema with any other keyword gets no
// fast validator at all.
type fast struct {
	types typeSet

	// strings
	minLen, maxLen int // -1: no bound
	pattern        *regexp.Regexp
	enum           []string // nil: no enum

	// numbers (integer or number)
	min, max *float64

	// objects
	props    map[string]*fast
	required []string
	closed   bool // additionalProperties: false

	// arrays
	items              *fast
	minItems, maxItems int // -1: no bound
}

// typeSet is the JSON type a schema's "type" names; 0 is any.
type typeSet uint8

const (
	tString typeSet = 1 << iota
	tInteger
	tNumber
	tBoolean
	tObject
	tArray
	tNull
)

// typeNamed returns the type of a "type" keyword's name; 0 for none.
func typeNamed(name string) typeSet {
	switch name {
	case "string":
		return tString
	case "integer":
		return tInteger
	case "number":
		return tNumber
	case "boolean":
		return tBoolean
	case "object":
		return tObject
	case "array":
		return tArray
	case "null":
		return tNull
	}
	return 0
}

// String returns the type's keyword name, "" for none.
func (t typeSet) String() string {
	for _, name := range []string{"string", "integer", "number", "boolean", "object", "array", "null"} {
		if typeNamed(name) == t {
			return name
		}
	}
	return ""
}

// compileFast returns the fast validator of a schema document, or nil when
// the document uses anything the fast validator does not implement.
func compileFast(raw []byte) *fast {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var doc any
	if d.Decode(&doc) != nil {
		return nil
	}
	f, ok := fastNode(doc)
	if !ok {
		return nil
	}
	return f
}

func fastNode(doc any) (*fast, bool) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, false // boolean schemas: rare, left to jsonschema
	}
	f := &fast{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	for k, v := range m {
		ok := true
		switch k {
		case "description", "title":
			// annotations: they never change the answer, but a document
			// whose annotations the meta-schema refuses is left to
			// jsonschema (CompileLazily relies on it)
			_, ok = v.(string)
		case "examples":
			_, ok = v.([]any)
		case "default":
		case "type":
			var name string
			if name, ok = v.(string); ok {
				f.types = typeNamed(name)
				ok = f.types != 0
			}
		case "minLength":
			f.minLen, ok = count(v)
		case "maxLength":
			f.maxLen, ok = count(v)
		case "minItems":
			f.minItems, ok = count(v)
		case "maxItems":
			f.maxItems, ok = count(v)
		case "pattern":
			var p string
			if p, ok = v.(string); ok {
				// jsonschema's default engine is regexp.Compile: unanchored.
				f.pattern, _ = regexp.Compile(p)
				ok = f.pattern != nil
			}
		case "minimum":
			f.min, ok = bound(v)
		case "maximum":
			f.max, ok = bound(v)
		case "enum":
			f.enum, ok = strs(v, false)
		case "required":
			f.required, ok = strs(v, true)
			ok = ok && !hasDuplicate(f.required) // the meta-schema wants them unique
		case "additionalProperties":
			var b bool
			b, ok = v.(bool)
			ok = ok && !b // false only: keep the subset small
			f.closed = ok
		case "properties":
			var ps map[string]any
			if ps, ok = v.(map[string]any); ok {
				f.props = make(map[string]*fast, len(ps))
				for name, sub := range ps {
					if f.props[name], ok = fastNode(sub); !ok {
						break
					}
				}
			}
		case "items":
			f.items, ok = fastNode(v)
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
	return f, true
}

// count reads a non-negative integer keyword value.
func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil || i < 0 || i > math.MaxInt32 {
		return 0, false
	}
	return int(i), true
}

// bound reads a minimum or maximum that a float64 holds exactly, so that
// comparing float64 values with it is exact (jsonschema compares big.Rat).
func bound(v any) (*float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil, false
	}
	x, exact := r.Float64()
	if !exact {
		return nil, false
	}
	return &x, true
}

// strs reads an array of strings ("enum" must not be empty).
func strs(v any, emptyOK bool) ([]string, bool) {
	vs, ok := v.([]any)
	if !ok || len(vs) == 0 && !emptyOK {
		return nil, false
	}
	out := make([]string, len(vs))
	for i, e := range vs {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// valid reports whether v certainly matches the schema. v is what
// encoding/json decodes into an any: map[string]any, []any, string,
// float64, bool or nil. false means "ask jsonschema".
func (f *fast) valid(v any) bool {
	switch v := v.(type) {
	case string:
		if f.types != 0 && f.types != tString {
			return false
		}
		if f.minLen >= 0 || f.maxLen >= 0 {
			n := utf8.RuneCountInString(v)
			if n < f.minLen || f.maxLen >= 0 && n > f.maxLen {
				return false
			}
		}
		if f.pattern != nil && !f.pattern.MatchString(v) {
			return false
		}
	case float64:
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return false
		case f.types == tInteger && v != math.Trunc(v):
			return false
		case f.types != 0 && f.types != tInteger && f.types != tNumber:
			return false
		case f.min != nil && v < *f.min, f.max != nil && v > *f.max:
			return false
		}
	case bool:
		if f.types != 0 && f.types != tBoolean {
			return false
		}
	case nil:
		if f.types != 0 && f.types != tNull {
			return false
		}
	case map[string]any:
		if f.types != 0 && f.types != tObject {
			return false
		}
		if !f.validObject(v) {
			return false
		}
	case []any:
		if f.types != 0 && f.types != tArray {
			return false
		}
		if len(v) < f.minItems || f.maxItems >= 0 && len(v) > f.maxItems {
			return false
		}
		if f.items != nil {
			for _, e := range v {
				if !f.items.valid(e) {
					return false
				}
			}
		}
	default:
		return false // json.Number, Go integers...: jsonschema's business
	}
	if f.enum != nil {
		s, ok := v.(string)
		if !ok {
			return false
		}
		for _, e := range f.enum {
			if s == e {
				return true
			}
		}
		return false
	}
	return true
}

func (f *fast) validObject(m map[string]any) bool {
	for _, r := range f.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	for k, e := range m {
		sub, ok := f.props[k]
		if !ok {
			if f.closed {
				return false
			}
			continue
		}
		if !sub.valid(e) {
			return false
		}
	}
	return true
}

// TopTypes returns, for a closed object schema ("additionalProperties":
// false) within the fast subset, the JSON type each property must have
// ("string", "integer", "boolean"...; "" when its schema names none). It
// returns nil for any other schema. Callers use it to map arguments the
// schema accepted onto typed fields without decoding the JSON again.
func (s *Schema) TopTypes() map[string]string {
	f := s.fast
	if f == nil || !f.closed || f.types != tObject {
		return nil
	}
	out := make(map[string]string, len(f.props))
	for name, p := range f.props {
		out[name] = p.types.String()
	}
	return out
}

func hasDuplicate(ss []string) bool {
	seen := make(map[string]bool, len(ss))
	for _, s := range ss {
		if seen[s] {
			return true
		}
		seen[s] = true
	}
	return false
}
