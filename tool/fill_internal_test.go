package tool

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/reinhq/rein/tool/schema"
)

// TestNewFiller: the filler is built only where json.Unmarshal's mapping
// of the struct is plain; everywhere else the typed decode stays.
func TestNewFiller(t *testing.T) {
	t.Parallel()
	const closed = `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"},"n":{"type":"integer"}},"additionalProperties":false}`
	type plain struct {
		A string `json:"a"`
		B bool   `json:"b,omitempty"`
		N int    `json:"n,omitzero"`
		//lint:ignore U1000 an unexported field the filler must leave alone
		hidden int
		Skip   string `json:"-"`
	}
	type inner struct{ A string }
	type embedded struct {
		inner
		B bool `json:"b"`
		N int  `json:"n"`
	}
	type asString struct {
		A string `json:"a"`
		B bool   `json:"b,string"`
		N int    `json:"n"`
	}
	type caseOnly struct {
		A string `json:"A"`
		B bool   `json:"b"`
		N int    `json:"n"`
	}
	type wrongKind struct {
		A []byte `json:"a"`
		B bool   `json:"b"`
		N int    `json:"n"`
	}
	type dup struct {
		A string `json:"a"`
		B bool   `json:"b"`
		N int    `json:"n"`
		X string // named X by json, as is the next one
		Y string `json:"X"`
	}
	for _, c := range []struct {
		name   string
		typ    reflect.Type
		schema string
		want   bool
	}{
		{"plain", reflect.TypeFor[plain](), closed, true},
		{"open schema", reflect.TypeFor[plain](), `{"type":"object","properties":{"a":{"type":"string"}}}`, false},
		{"schema outside the subset", reflect.TypeFor[plain](), `{"type":"object","properties":{"a":{"type":"string","format":"uri"}},"additionalProperties":false}`, false},
		{"embedded", reflect.TypeFor[embedded](), closed, false},
		{"string option", reflect.TypeFor[asString](), closed, false},
		{"names differ in case", reflect.TypeFor[caseOnly](), closed, false},
		{"kind differs", reflect.TypeFor[wrongKind](), closed, false},
		{"two fields, one name", reflect.TypeFor[dup](), closed, false},
		{"not a struct", reflect.TypeFor[map[string]any](), closed, false},
	} {
		got := newFiller(c.typ, schema.MustCompile("t", []byte(c.schema))) != nil
		if got != c.want {
			t.Errorf("%s: filler built = %v, want %v", c.name, got, c.want)
		}
	}
}

type fillArgs struct {
	A string `json:"a"`
	N int    `json:"n"`
}

func (a *fillArgs) Check() error { return nil }

// TestFillLeavesNumbersToJSON: a present integer argument is decoded from
// the JSON, which refuses 5.0 for an int as json.Unmarshal always has.
func TestFillLeavesNumbersToJSON(t *testing.T) {
	t.Parallel()
	f := New(Spec{Name: "t", Schema: []byte(`{"type":"object","properties":{"a":{"type":"string"},"n":{"type":"integer"}},"additionalProperties":false}`)},
		func(_ context.Context, a fillArgs) (string, error) { return "", nil })
	if f.fill == nil {
		t.Fatal("no filler for a plain struct")
	}
	for _, c := range []struct {
		doc  string
		want *fillArgs // nil: refused
	}{
		{`{"a":"x"}`, &fillArgs{A: "x"}},
		{`{"a":"x","n":5}`, &fillArgs{A: "x", N: 5}},
		{`{"a":"x","n":5.0}`, nil},
		{`{"a":"x","n":1e2}`, nil},
		{`{"a":"x","a":"y"}`, nil},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.doc), &v); err != nil {
			t.Fatal(err)
		}
		got, err := f.ValidateValue([]byte(c.doc), v)
		switch {
		case c.want == nil && err == nil:
			t.Errorf("%s: accepted as %+v", c.doc, got)
		case c.want != nil && err != nil:
			t.Errorf("%s: %v", c.doc, err)
		case c.want != nil && !reflect.DeepEqual(got, c.want):
			t.Errorf("%s: decoded %+v, want %+v", c.doc, got, c.want)
		}
	}
}
