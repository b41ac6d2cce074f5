// Package schema checks a tool's arguments against its JSON Schema, with
// github.com/santhosh-tekuri/jsonschema/v6, and says what was wrong in words
// a model can act on: which argument, and what the schema wanted.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// printer renders messages in English; it is never written after init.
var printer = message.NewPrinter(language.English)

// Schema is a compiled JSON Schema. It is safe for concurrent use.
type Schema struct {
	name   string
	sch    *jsonschema.Schema
	closed bool
	fast   *fast // nil when the schema uses keywords it does not implement
}

// Closed reports whether the schema is an object schema that forbids
// properties it does not name ("additionalProperties": false at the top).
func (s *Schema) Closed() bool { return s.closed }

// ErrInvalid marks arguments the schema rejects.
var ErrInvalid = errors.New("arguments do not match the schema")

// Compile compiles a JSON Schema document (draft 2020-12 unless it says
// otherwise). name identifies it in errors.
func Compile(name string, raw []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema of %s: not JSON: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "rein:///tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	var top struct {
		Additional *bool `json:"additionalProperties"`
	}
	_ = json.Unmarshal(raw, &top) // it compiled: it is JSON
	return &Schema{name: name, sch: sch, closed: top.Additional != nil && !*top.Additional, fast: compileFast(raw)}, nil
}

// MustCompile is Compile for schemas fixed in code; it panics on an error.
func MustCompile(name string, raw []byte) *Schema {
	s, err := Compile(name, raw)
	if err != nil {
		panic(err)
	}
	return s
}

// Validate checks a JSON document against the schema. The error wraps
// ErrInvalid and names every failing argument.
func (s *Schema) Validate(doc []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("%w: the arguments are not valid JSON (%v)", ErrInvalid, err)
	}
	return s.ValidateValue(inst)
}

// ValidateValue checks a decoded value: what jsonschema.UnmarshalJSON
// returns (numbers as json.Number) or what encoding/json decodes into an any
// (numbers as float64). Schemas within the subset rein's own tools use
// accept the second kind without jsonschema's allocations; every rejection,
// and every other schema, goes through jsonschema.
func (s *Schema) ValidateValue(inst any) error {
	if s.fast != nil && s.fast.valid(inst) {
		return nil
	}
	err := s.sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return fmt.Errorf("%w: %s", ErrInvalid, Explain(ve))
}

// Explain renders a validation error as "argument: problem" phrases, one
// per failing leaf, sorted and joined with "; ".
func Explain(ve *jsonschema.ValidationError) string {
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msgs = append(msgs, leaf(e))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(msgs)
	msgs = slices.Compact(msgs)
	return strings.Join(msgs, "; ")
}

func leaf(e *jsonschema.ValidationError) string {
	at := ""
	if len(e.InstanceLocation) > 0 {
		at = strings.Join(e.InstanceLocation, ".")
	}
	name := fmt.Sprintf("%q", at)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return join(at, fmt.Sprintf("%s required", plural(k.Missing, "is", "are")))
	case *kind.AdditionalProperties:
		props := slices.Sorted(slices.Values(k.Properties)) // from a map: sort for stable text
		return join(at, fmt.Sprintf("unknown field %s: remove it (names are case-sensitive)", strings.Join(quoted(props), ", ")))
	case *kind.Type:
		if at == "" {
			return fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), k.Got)
		}
		return fmt.Sprintf("%s must be %s, got %s", name, article(strings.Join(k.Want, " or ")), k.Got)
	case *kind.MinLength:
		if k.Got == 0 {
			return fmt.Sprintf("%s is empty: it is required", name)
		}
		return fmt.Sprintf("%s has %d characters: it needs at least %d", name, k.Got, k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("%s has %d characters: at most %d are allowed", name, k.Got, k.Want)
	case *kind.Minimum:
		return fmt.Sprintf("%s is %s: it must be at least %s", name, k.Got.RatString(), k.Want.RatString())
	case *kind.Maximum:
		return fmt.Sprintf("%s is %s: it must be at most %s", name, k.Got.RatString(), k.Want.RatString())
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprintf("%v", w)
		}
		return fmt.Sprintf("%s is %v: it must be one of %s", name, k.Got, strings.Join(want, ", "))
	case *kind.Pattern:
		return fmt.Sprintf("%s does not have the required form", name)
	}
	return join(at, e.ErrorKind.LocalizedString(printer))
}

func join(at, msg string) string {
	if at == "" {
		return msg
	}
	return fmt.Sprintf("%q: %s", at, msg)
}

func quoted(s []string) []string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return q
}

func plural(names []string, one, many string) string {
	if len(names) == 1 {
		return fmt.Sprintf("%q %s", names[0], one)
	}
	return fmt.Sprintf("%s %s", strings.Join(quoted(names), ", "), many)
}

func article(t string) string {
	switch {
	case t == "integer":
		return "a whole number"
	case strings.HasPrefix(t, "a") || strings.HasPrefix(t, "o") || strings.HasPrefix(t, "i"):
		return "an " + t
	}
	return "a " + t
}
