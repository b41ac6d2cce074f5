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
	"reflect"
	"slices"
	"strings"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/jsonx"
	"github.com/reinhq/rein/tool/schema"
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

// MarshalText renders the effect by name; an effect that is none of the
// three is refused.
func (e Effect) MarshalText() ([]byte, error) {
	if e > Irreversible {
		return nil, fmt.Errorf("effect(%d): want read-only, reversible or irreversible", uint8(e))
	}
	return []byte(e.String()), nil
}

// UnmarshalText parses "read-only", "reversible" or "irreversible"; any
// other text is refused.
func (e *Effect) UnmarshalText(b []byte) error {
	for _, v := range []Effect{ReadOnly, Reversible, Irreversible} {
		if string(b) == v.String() {
			*e = v
			return nil
		}
	}
	return fmt.Errorf("effect %q: want read-only, reversible or irreversible", b)
}

// Role says what a top-level string argument names, so that gates can find
// the arguments they judge without knowing each tool: the scope gate checks
// every Path and Glob, the shell gate every Command, the network gate every
// URL. Recipient and Amount mark sensitive positions for the data-flow gate.
// Target marks the record an update or delete acts on (a record id, an
// account): a call aimed at another record is another call, so a judge that
// compares calls (the eval's attentive user and harm judge, a human reading
// a prompt) compares it too. It may be a string or a number.
type Role uint8

// The argument roles.
const (
	RolePath      Role = iota + 1 // a file or directory, relative to the work dir
	RoleGlob                      // a glob pattern, relative to the work dir
	RoleDir                       // a working directory, relative to the work dir
	RoleCommand                   // a shell command line
	RoleURL                       // an absolute http(s) URL
	RoleRecipient                 // an address something is sent to
	RoleAmount                    // a sum of money
	RoleTarget                    // the record an update or delete acts on: an id, an account
)

func (r Role) String() string {
	switch r {
	case RolePath:
		return "path"
	case RoleGlob:
		return "glob"
	case RoleDir:
		return "dir"
	case RoleCommand:
		return "command"
	case RoleURL:
		return "url"
	case RoleRecipient:
		return "recipient"
	case RoleAmount:
		return "amount"
	case RoleTarget:
		return "target"
	}
	return fmt.Sprintf("role(%d)", uint8(r))
}

// Spec is a tool's fixed description.
type Spec struct {
	Name        string
	Description string          // written for a model: what, when, and what it will not do
	Schema      json.RawMessage // JSON Schema of the arguments object
	Effect      Effect
	// Roles names the arguments the gates must judge, by what they name.
	Roles map[string]Role
	// Echoes marks a tool whose result repeats what the model wrote itself
	// (its notes, its todo list) and nothing from outside: such a result is
	// the model's own words, neither the user's nor a source's, and the
	// data-flow gate takes nothing in it as found (agent.Authorship).
	Echoes bool
	// Computes marks a tool whose result is a function of its arguments
	// alone, nothing from outside (calc): the data-flow gate takes its
	// result as the model's own computation when every number in the
	// arguments is the user's, and as untrusted otherwise
	// (agent.Computations).
	Computes bool
	// UntrustedDescription marks a tool whose description was not written
	// by rein or the user but by a third party (an MCP server): the loop
	// tells the data-flow gate the description as untrusted text under the
	// tool's name, so a recipient, URL or amount it supplies is judged as
	// one a tool result supplied.
	UntrustedDescription bool
}

// ArgsWith returns the names of the arguments with role r, sorted.
func (s Spec) ArgsWith(r Role) []string {
	var names []string
	for n, role := range s.Roles {
		if role == r {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
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

// ValueValidator is a Validator that can also check arguments already
// parsed (numbers as json.Number), so the gates parse a call once. args is
// the same document as v.
type ValueValidator interface {
	Validator
	// ValidateValue returns, when it decoded them, the typed arguments, for
	// ExistsChecked and RunDecoded to reuse (a Func always does); nil when
	// it did not.
	ValidateValue(args json.RawMessage, v any) (decoded any, err error)
}

// Decoder is implemented by tools whose arguments are decoded once, by the
// gates, into the tool's typed argument value, and run as that value: the
// tool runs exactly what the gates judged, never a second decode of the raw
// bytes. gate.Call.Decoded calls Decode; the agent loop calls RunDecoded
// with what it returned, instead of Run. A type that embeds a Func and
// changes what Run does must change RunDecoded alike.
type Decoder interface {
	// Decode checks args and returns them decoded into the tool's typed
	// value. v is args parsed as encoding/json parses into an any, or nil
	// when they are not one JSON value (Decode then says what is wrong).
	Decode(args json.RawMessage, v any) (decoded any, err error)
	// RunDecoded runs the tool on a value Decode returned; any other value
	// is an error wrapping ErrArgs. It says where the output came from
	// (local, unless the tool fetched it: see NewSourced).
	RunDecoded(ctx context.Context, decoded any) (string, model.Source, error)
}

// Exister is implemented by tools that can say whether the resources their
// arguments name exist (an order id, an account). The existence gate calls
// it before the tool runs; an error wrapping ErrNotExist refuses the call.
type Exister interface {
	Exists(ctx context.Context, args json.RawMessage) error
}

// Confirmer is implemented by tools that know when a particular call needs a
// human's yes although the tool as a whole does not (write_file emptying a
// file that has content). Confirm returns the reason, or "" when no yes is
// needed. The confirm gate calls it; it must not change anything.
type Confirmer interface {
	Confirm(ctx context.Context, args json.RawMessage) string
}

// Effector is implemented by tools whose effect depends on the call, not
// only on the tool: a click is irreversible when the element under the
// pointer is a Pay button. EffectOf classes one call; it must not change
// anything. Spec().Effect stays the class of the tool as a whole (what
// code that sees no arguments reads). Use the function EffectOf, which
// falls back to Spec().Effect and fails closed.
type Effector interface {
	EffectOf(ctx context.Context, args json.RawMessage) (Effect, error)
}

// EffectOf returns the effect of one call of t: what its Effector says, or
// Spec().Effect for a tool without one. An Effector that fails (the
// element under the pointer cannot be inspected) makes the call
// Irreversible: what rein cannot judge is treated as the worst. So does
// one that panics.
func EffectOf(ctx context.Context, t Tool, args json.RawMessage) (eff Effect) {
	e, ok := t.(Effector)
	if !ok {
		return t.Spec().Effect
	}
	defer func() {
		if recover() != nil {
			eff = Irreversible
		}
	}()
	eff, err := e.EffectOf(ctx, args)
	if err != nil {
		return Irreversible
	}
	return eff
}

// Imager is implemented by tools whose result carries images beside its
// text (a computer action returns the screenshot taken after it). The
// loop calls RunImages in place of Run; the same rules as Run apply.
type Imager interface {
	RunImages(ctx context.Context, args json.RawMessage) (string, []model.Image, error)
}

// CheckedExister is an Exister that can skip re-validating arguments a
// Validator has already accepted in the same pipeline (the existence gate
// runs after the validation gate). Unchecked arguments must go to Exists.
type CheckedExister interface {
	Exister
	// ExistsChecked takes what ValidateValue returned as decoded (or nil).
	ExistsChecked(ctx context.Context, args json.RawMessage, decoded any) error
}

// Changer is implemented by tools that change files in the work dir: it
// names, before the call runs, the paths (relative to the work dir) the
// call may create, change or delete, so that rein can snapshot them for
// rollback. It must not change anything itself.
type Changer interface {
	Changes(args json.RawMessage) ([]string, error)
}

// ErrArgs marks arguments a tool cannot accept.
var ErrArgs = errors.New("invalid arguments")

// ErrNotExist marks a resource named in the arguments that does not exist.
var ErrNotExist = errors.New("does not exist")

// ErrFatal marks a tool error that is rein's failure, not the model's: the
// tool cannot work any more (its sandbox is dead and could not be
// restarted). The loop stops the run with an error instead of handing it
// to the model to try again.
var ErrFatal = errors.New("the tool cannot run any more")

// Func is a tool made from a function of a typed argument struct.
type Func[A any] struct {
	spec     Spec
	schema   *schema.Schema
	hasCheck bool     // *A has a Check method
	fill     *filler  // nil when A's fields cannot be set from a parsed value
	names    []string // A's top-level JSON field names (exactNames); nil when A is no struct
	run      func(ctx context.Context, args A) (string, model.Source, error)
	lookup   func(ctx context.Context, args A) error
}

var (
	_ ValueValidator = (*Func[struct{}])(nil)
	_ CheckedExister = (*Func[struct{}])(nil)
	_ Decoder        = (*Func[struct{}])(nil)
)

// New returns a tool that checks its arguments against spec.Schema (when
// set), decodes them into A and calls run. A schema that does not compile is
// a programming error and panics here, at construction.
func New[A any](spec Spec, run func(ctx context.Context, args A) (string, error)) *Func[A] {
	return NewSourced(spec, func(ctx context.Context, args A) (string, model.Source, error) {
		out, err := run(ctx, args)
		return out, model.Source{}, err
	})
}

// NewSourced is New for a tool whose output may come from outside the
// session's machine: run also says where it came from (a web page and its
// final URL), and RunSourced hands that on. Only the tool that fetched
// the content says where it is from; nothing reads it from the text.
func NewSourced[A any](spec Spec, run func(ctx context.Context, args A) (string, model.Source, error)) *Func[A] {
	f := &Func[A]{spec: spec, run: run}
	_, f.hasCheck = any(new(A)).(interface{ Check() error })
	if t := reflect.TypeFor[A](); t.Kind() == reflect.Struct {
		f.names = fieldNames(t, nil)
	}
	if len(spec.Schema) > 0 {
		f.schema = schema.MustCompile(spec.Name, spec.Schema)
		f.fill = newFiller(reflect.TypeFor[A](), f.schema)
	}
	return f
}

// WithLookup declares how to check that the resources the arguments name
// exist; lookup returns an error wrapping ErrNotExist for a miss. It returns f.
func (f *Func[A]) WithLookup(lookup func(ctx context.Context, args A) error) *Func[A] {
	f.lookup = lookup
	return f
}

// Spec returns the tool's description.
func (f *Func[A]) Spec() Spec { return f.spec }

// Validate checks args against the schema and decodes them into A strictly.
func (f *Func[A]) Validate(args json.RawMessage) error {
	_, err := f.decode(args)
	return err
}

// ValidateValue is Validate for arguments the caller has parsed already;
// it returns them decoded (a *A), as Decode does.
func (f *Func[A]) ValidateValue(args json.RawMessage, v any) (any, error) {
	return f.Decode(args, v)
}

// Decode checks args, which the caller has parsed into v (nil when they are
// not one JSON value), and returns them decoded into a *A, for RunDecoded.
// Arguments in the common shape (a closed schema, string and boolean
// fields) are filled from v without parsing them again.
func (f *Func[A]) Decode(args json.RawMessage, v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		a, err := f.decode(args) // not an object: the full path says what it is
		if err != nil {
			return nil, err
		}
		return &a, nil
	}
	if f.schema != nil {
		if err := f.schema.ValidateValue(v); err != nil {
			return nil, fmt.Errorf("%w for %s: %w", ErrArgs, f.spec.Name, err)
		}
		if f.schema.Closed() && f.fill != nil {
			// Fields and types are the schema's; a typed decode would find
			// nothing more than duplicate keys.
			if err := jsonx.CheckKeys(args); err != nil {
				return nil, fmt.Errorf("%w for %s: %w", ErrArgs, f.spec.Name, err)
			}
			a := new(A)
			if f.fill.fill(reflect.ValueOf(a).Elem(), m) {
				if err := f.check(a); err != nil {
					return nil, err
				}
				return a, nil
			}
		}
	}
	a, err := f.decodeTyped(args)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// RunDecoded calls the function with arguments Decode returned, without
// decoding anything again.
func (f *Func[A]) RunDecoded(ctx context.Context, decoded any) (string, model.Source, error) {
	a, ok := decoded.(*A)
	if !ok || a == nil {
		return "", model.Source{}, fmt.Errorf("%w for %s: decoded arguments of type %T, not %T", ErrArgs, f.spec.Name, decoded, a)
	}
	return f.run(ctx, *a)
}

// ExistsChecked is Exists for arguments Validate has accepted: they are
// decoded, not checked against the schema again.
func (f *Func[A]) ExistsChecked(ctx context.Context, args json.RawMessage, decoded any) error {
	if f.lookup == nil {
		return nil
	}
	if a, ok := decoded.(*A); ok {
		return f.lookup(ctx, *a)
	}
	a, err := f.decodeTyped(args)
	if err != nil {
		return err
	}
	return f.lookup(ctx, a)
}

// Exists runs the lookup declared with WithLookup; nil when there is none.
// Arguments the tool does not accept are an error wrapping ErrArgs.
func (f *Func[A]) Exists(ctx context.Context, args json.RawMessage) error {
	if f.lookup == nil {
		return nil
	}
	a, err := f.decode(args)
	if err != nil {
		return err
	}
	return f.lookup(ctx, a)
}

// Run decodes args and calls the function.
func (f *Func[A]) Run(ctx context.Context, args json.RawMessage) (string, error) {
	out, _, err := f.RunSourced(ctx, args)
	return out, err
}

// RunSourced is Run that also says where the output came from: local,
// unless the tool was made with NewSourced and its function said else.
func (f *Func[A]) RunSourced(ctx context.Context, args json.RawMessage) (string, model.Source, error) {
	a, err := f.decode(args)
	if err != nil {
		return "", model.Source{}, err
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
	if f.schema != nil {
		if err := f.schema.Validate(args); err != nil {
			return a, fmt.Errorf("%w for %s: %w", ErrArgs, f.spec.Name, err)
		}
	}
	return f.decodeTyped(args)
}

// decodeTyped decodes args, already checked to be an object that matches
// the schema, into A strictly, and runs A's own Check.
func (f *Func[A]) decodeTyped(args json.RawMessage) (A, error) {
	var a A
	if f.schema != nil && f.schema.Closed() {
		// The schema has refused unknown fields and checked the types;
		// what is left is duplicate keys, which it cannot see.
		if err := jsonx.CheckKeys(args); err != nil {
			return a, fmt.Errorf("%w for %s: %w", ErrArgs, f.spec.Name, err)
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return a, fmt.Errorf("%w for %s: %w", ErrArgs, f.spec.Name, jsonx.Explain(args, err))
		}
	} else {
		// No closed schema names the fields exactly, and encoding/json
		// matches names regardless of case: {"PATH":…} would fill Path
		// while every gate reads the argument "path" and finds none.
		if err := jsonx.DecodeStrict(args, &a); err != nil {
			return a, fmt.Errorf("%w for %s: %w", ErrArgs, f.spec.Name, err)
		}
		if err := exactNames(args, f.names); err != nil {
			return a, fmt.Errorf("%w for %s: %w", ErrArgs, f.spec.Name, err)
		}
	}
	return a, f.check(&a)
}

// exactNames refuses a top-level key of args that names one of a struct's
// fields (names) only when case is ignored: the gates read arguments by
// their exact names, so the tool must not be handed a value under another
// spelling.
func exactNames(args json.RawMessage, names []string) error {
	if len(names) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return nil // not an object: the strict decode says what is wrong
	}
	for k := range m {
		if slices.Contains(names, k) {
			continue
		}
		for _, n := range names {
			if strings.EqualFold(k, n) {
				return fmt.Errorf("argument %q: argument names are case-sensitive; did you mean %q?", k, n)
			}
		}
	}
	return nil
}

// fieldNames appends the JSON names of t's fields (embedded structs'
// fields included) to dst.
func fieldNames(t reflect.Type, dst []string) []string {
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			dst = fieldNames(f.Type, dst)
		case tag != "":
			dst = append(dst, tag)
		case f.IsExported():
			dst = append(dst, f.Name)
		}
	}
	return dst
}

// check runs A's own Check, if it has one.
func (f *Func[A]) check(a *A) error {
	if v, ok := any(a).(interface{ Check() error }); ok {
		if err := v.Check(); err != nil {
			return fmt.Errorf("%w for %s: %w", ErrArgs, f.spec.Name, err)
		}
	}
	return nil
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
		_, decodes := t.(Decoder)
		if _, images := t.(Imager); decodes && images {
			// The loop runs a Decoder on the value the gates decoded and an
			// Imager on its raw arguments: a tool that is both would run
			// one of the two unjudged.
			return nil, fmt.Errorf("tool registry: %s both decodes its arguments (Decoder) and returns images (Imager); it may do one", name)
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
