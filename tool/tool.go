// Package tool defines what a tool is to rein: a name, a description and a
// JSON Schema for the model, an effect class for the gates, and a Run method
// that does the work. A Registry holds a session's tools, built explicitly
// and passed in; nothing registers itself.
//
// Tools are typed: New wraps a function of a typed argument struct, decodes
// the model's JSON into it strictly (unknown fields are errors) and reports
// what was wrong when it cannot. A tool never decides whether it may run;
// the gates do that before Run is called.
package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/jsonx"
	"github.com/reinhq/rein/model"
)

// Effect classes a tool by what it can do to the world. The gates read it;
// the model's description of its own call never changes it.
type Effect uint8

const (
	// ReadOnly tools only read, compute or keep session-local notes.
	ReadOnly Effect = iota
	// Reversible tools change state rein can restore (files in the work dir).
	Reversible
	// Irreversible tools cause effects that cannot be taken back: sending,
	// paying, deleting outside rein's reach. They always need a human's yes.
	Irreversible
)

func (e Effect) String() string {
	switch e {
	case ReadOnly:
		return "read-only"
	case Reversible:
		return "reversible"
	case Irreversible:
		return "irreversible"
	}
	return fmt.Sprintf("effect(%d)", uint8(e))
}

// MarshalText renders the effect by name.
func (e Effect) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// Spec is a tool's fixed description.
type Spec struct {
	Name        string
	Description string          // written for a model: what, when, and what it will not do
	Schema      json.RawMessage // JSON Schema of the arguments object
	Effect      Effect
}

// Def returns the definition offered to a model.
func (s Spec) Def() model.ToolDef {
	return model.ToolDef{Name: s.Name, Description: s.Description, Schema: s.Schema}
}

// Tool is something the model can ask for.
//
// Run returns the text that goes back to the model. An error means the tool
// failed; its message goes back to the model as an error result, so it must
// say what went wrong and what to do instead. Run must honour ctx.
type Tool interface {
	Spec() Spec
	Run(ctx context.Context, args json.RawMessage) (string, error)
}

// Validator is implemented by tools that can check arguments without running.
// The validation gate uses it; a tool that does not implement it is checked
// only for being a JSON object.
type Validator interface {
	Validate(args json.RawMessage) error
}

// ErrArgs marks arguments a tool cannot accept.
var ErrArgs = errors.New("invalid arguments")

// Func is a tool made from a function of a typed argument struct.
type Func[A any] struct {
	spec Spec
	run  func(ctx context.Context, args A) (string, error)
}

var _ Validator = (*Func[struct{}])(nil)

// New returns a tool that decodes its arguments into A and calls run.
func New[A any](spec Spec, run func(ctx context.Context, args A) (string, error)) *Func[A] {
	return &Func[A]{spec: spec, run: run}
}

// Spec returns the tool's description.
func (f *Func[A]) Spec() Spec { return f.spec }

// Validate decodes args into A strictly.
func (f *Func[A]) Validate(args json.RawMessage) error {
	_, err := f.decode(args)
	return err
}

// Run decodes args and calls the function.
func (f *Func[A]) Run(ctx context.Context, args json.RawMessage) (string, error) {
	a, err := f.decode(args)
	if err != nil {
		return "", err
	}
	return f.run(ctx, a)
}

func (f *Func[A]) decode(args json.RawMessage) (A, error) {
	var a A
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	if !jsonx.IsObject(args) {
		return a, fmt.Errorf("%w for %s: expected a JSON object, got %s", ErrArgs, f.spec.Name, jsonx.Kind(args))
	}
	if err := jsonx.DecodeStrict(args, &a); err != nil {
		return a, fmt.Errorf("%w for %s: %w", ErrArgs, f.spec.Name, err)
	}
	if v, ok := any(&a).(interface{ Check() error }); ok {
		if err := v.Check(); err != nil {
			return a, fmt.Errorf("%w for %s: %w", ErrArgs, f.spec.Name, err)
		}
	}
	return a, nil
}

// Registry is the set of tools a session knows, by name. It is immutable
// once built and safe for concurrent use.
type Registry struct {
	byName map[string]Tool
	names  []string
}

// NewRegistry returns a registry of tools; names must be unique and non-empty.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		name := t.Spec().Name
		if name == "" {
			return nil, errors.New("tool registry: a tool has no name")
		}
		if _, dup := r.byName[name]; dup {
			return nil, fmt.Errorf("tool registry: two tools are named %q", name)
		}
		r.byName[name] = t
		r.names = append(r.names, name)
	}
	slices.Sort(r.names)
	return r, nil
}

// Lookup returns the tool with the given name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Has reports whether a tool of that name exists.
func (r *Registry) Has(name string) bool {
	_, ok := r.byName[name]
	return ok
}

// Names returns every tool name, sorted.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Defs returns the model definitions of the named tools, in the order given,
// skipping names the registry does not have.
func (r *Registry) Defs(names []string) []model.ToolDef {
	defs := make([]model.ToolDef, 0, len(names))
	for _, n := range names {
		if t, ok := r.byName[n]; ok {
			defs = append(defs, t.Spec().Def())
		}
	}
	return defs
}

// CheckNames returns an error naming any of names the registry does not have,
// with the names it does have, so a typo in a flag or config is caught early.
func (r *Registry) CheckNames(names []string) error {
	var unknown []string
	for _, n := range names {
		if !r.Has(n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return fmt.Errorf("unknown tool %s (known: %s)", strings.Join(quoteAll(unknown), ", "), strings.Join(r.names, ", "))
}

func quoteAll(s []string) []string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return q
}
