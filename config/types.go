package config

import (
	"encoding"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// TypeError is a key whose value has the wrong type: the message names the
// key, what the file gave and what rein expects, in words rather than in
// the TOML decoder's terms.
type TypeError struct {
	Key  string // dotted, like "tools.read_lines"
	Got  string // "a string", "an integer", ...
	Want string // "an integer", "a list of strings", ...
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("%s is %s; it must be %s", e.Key, e.Got, e.Want)
}

var (
	limitsType = reflect.TypeFor[Limits]()
	textType   = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkTypes walks a decoded TOML table against the Go type it will be
// decoded into, so a value of the wrong type is reported as a TypeError
// (or, under [limits], by Limits' own rules) before the decoder's message
// could be. Keys that name no field are left for the unknown-key check.
func checkTypes(table map[string]any, t reflect.Type, prefix string) error {
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f, ok := fieldOf(t, k)
		if !ok {
			continue
		}
		if err := checkValue(table[k], f, prefix+k); err != nil {
			return err
		}
	}
	return nil
}

// fieldOf finds the field a key decodes into: by its toml tag, else by a
// case-insensitive name, as the decoder does.
func fieldOf(t reflect.Type, key string) (reflect.Type, bool) {
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == key || (tag == "" && strings.EqualFold(f.Name, key)) {
			return f.Type, true
		}
	}
	return nil, false
}

func checkValue(v any, t reflect.Type, key string) error {
	if t == limitsType {
		return (&Limits{}).UnmarshalTOML(v)
	}
	wrong := func(want string) error { return &TypeError{Key: key, Got: tomlType(v), Want: want} }
	if reflect.PointerTo(t).Implements(textType) {
		if _, ok := v.(string); !ok {
			return wrong("a string")
		}
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok {
			return wrong("a string")
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if _, ok := v.(int64); !ok {
			return wrong("a whole number")
		}
	case reflect.Float64:
		switch v.(type) {
		case int64, float64:
		default:
			return wrong("a number")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return wrong("true or false")
		}
	case reflect.Slice:
		return checkSlice(v, t, key)
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return wrong("a table")
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if err := checkValue(m[k], t.Elem(), key+"."+k); err != nil {
				return err
			}
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return wrong("a table")
		}
		return checkTypes(m, t, key+".")
	}
	return nil
}

func checkSlice(v any, t reflect.Type, key string) error {
	var items []any
	switch s := v.(type) {
	case []any:
		items = s
	case []map[string]any:
		for _, m := range s {
			items = append(items, m)
		}
	default:
		if t.Elem().Kind() == reflect.Struct {
			return &TypeError{Key: key, Got: tomlType(v), Want: "a list of tables, like [[" + key + "]]"}
		}
		return &TypeError{Key: key, Got: tomlType(v), Want: "a list, like [\"a\", \"b\"]"}
	}
	for i, item := range items {
		if err := checkValue(item, t.Elem(), fmt.Sprintf("%s[%d]", key, i)); err != nil {
			return err
		}
	}
	return nil
}
