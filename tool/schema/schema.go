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
	"sync"

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
	sch    *jsonschema.Schema // nil until lazy has run, for CompileLazily's
	lazy   func() (*jsonschema.Schema, error)
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
	return NewCompiler().Compile(name, raw)
}

// Compiler compiles many schemas with one jsonschema compiler, so the
// meta-schema every document is checked against is loaded and compiled
// once, not once per schema: an MCP server's hundred tools cost a hundred
// compilations, not a hundred and one hundred meta-schemas. Each schema is
// a resource named by its name (rein:///tools/NAME.json): names must be
// distinct, and a schema must not refer to another by that URL (callers
// that take schemas from elsewhere refuse every $ref outside the document
// first). A Compiler is not safe for concurrent use; the Schemas it makes
// are.
type Compiler struct {
	c *jsonschema.Compiler
}

// NewCompiler returns a compiler for draft 2020-12 (unless a document says
// otherwise).
func NewCompiler() *Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	return &Compiler{c: c}
}

// Compile compiles one document, as the package's Compile does.
func (cp *Compiler) Compile(name string, raw []byte) (s *Schema, err error) {
	defer func() {
		if err != nil { // start afresh: nothing of a failed document stays
			*cp = *NewCompiler()
		}
	}()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema of %s: not JSON: %w", name, err)
	}
	url := "rein:///tools/" + name + ".json"
	if err := cp.c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	sch, err := cp.c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	var top struct {
		Additional *bool `json:"additionalProperties"`
	}
	_ = json.Unmarshal(raw, &top) // it compiled: it is JSON
	return &Schema{name: name, sch: sch, closed: top.Additional != nil && !*top.Additional, fast: compileFast(raw)}, nil
}

// CompileLazily is Compiler.Compile for many documents from elsewhere (an MCP
// server's tools), where compiling them all up front with jsonschema is
// most of the cost of taking them in. A document within the subset rein
// validates itself (type, properties, required, items, enum, pattern,
// length, item and number bounds, additionalProperties false, string
// annotations) is checked here, strictly: such a document is valid against
// the meta-schema by construction, so every error Compile would report it
// reports now too, and jsonschema compiles it only when an argument is
// refused and has to be explained. Any other document is compiled with
// jsonschema at once, as Compile does.
func (cp *Compiler) CompileLazily(name string, raw []byte) (*Schema, error) {
	if s := lazily(name, raw); s != nil {
		return s, nil
	}
	return cp.Compile(name, raw)
}

// lazily is CompileLazily's schema for a document within rein's subset,
// or nil for any other document.
func lazily(name string, raw []byte) *Schema {
	f := compileFast(raw)
	if f == nil {
		return nil
	}
	var top struct {
		Additional *bool `json:"additionalProperties"`
	}
	_ = json.Unmarshal(raw, &top) // compileFast decoded it: it is JSON
	raw = bytes.Clone(raw)
	return &Schema{name: name, fast: f, closed: top.Additional != nil && !*top.Additional,
		lazy: sync.OnceValues(func() (*jsonschema.Schema, error) {
			s, err := Compile(name, raw)
			if err != nil {
				return nil, err
			}
			return s.sch, nil
		})}
}

// MustCompile is Compile for schemas fixed in code; it panics on an error.
// Like CompileLazily, it leaves a document within rein's subset (every
// built-in tool's) to jsonschema until an argument is refused: a session
// builds its tools at start-up, and compiling them all with jsonschema
// was most of the tools' share of it.
func MustCompile(name string, raw []byte) *Schema {
	if s := lazily(name, raw); s != nil {
		return s
	}
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
	sch := s.sch
	if sch == nil {
		var err error
		if sch, err = s.lazy(); err != nil { // cannot happen for the subset: said, not hidden
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	err := sch.Validate(inst)
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
