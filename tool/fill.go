package tool

import (
	"reflect"
	"strings"

	"github.com/reinhq/rein/tool/schema"
)

// filler sets the fields of an argument struct from arguments already
// parsed into a map and accepted by a closed schema, giving what
// json.Unmarshal of the same document would, without parsing it again.
// It is built only for structs whose mapping is plain (see newFiller);
// when a call holds anything it does not handle (a number: its text is
// gone, and json.Unmarshal refuses 5.0 for an int), it reports false and
// the caller decodes the JSON.
type filler struct {
	fields map[string]fillField // by JSON name, exactly as the schema names it
}

type fillField struct {
	index int
	kind  reflect.Kind // reflect.String or reflect.Bool; others are left to json.Unmarshal
}

// newFiller returns the filler for struct type t under schema s, or nil when
// json.Unmarshal's mapping of t is not plain: every property of the schema
// must be a field of t whose JSON name is exactly the property's, no field
// may be embedded or carry a tag option other than omitempty/omitzero, and
// each string or boolean property must be a field of that kind.
func newFiller(t reflect.Type, s *schema.Schema) *filler {
	if t.Kind() != reflect.Struct || s == nil {
		return nil
	}
	props := s.TopTypes()
	if props == nil {
		return nil
	}
	byName := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil // embedded fields are promoted by json: not plain
		}
		if !sf.IsExported() {
			continue // json ignores them
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue // json ignores it
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != "" {
			return nil // json falls back to the Go name for some tags: keep to plain ones
		}
		for o := range strings.SplitSeq(opts, ",") {
			if o != "" && o != "omitempty" && o != "omitzero" {
				return nil // ",string" and the like change the decoding
			}
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := byName[name]; dup {
			return nil
		}
		byName[name] = i
	}
	f := &filler{fields: make(map[string]fillField, len(props))}
	for prop, typ := range props {
		i, ok := byName[prop]
		if !ok {
			return nil // json would look for a case-insensitive match
		}
		k := t.Field(i).Type.Kind()
		switch {
		case typ == "string" && k == reflect.String, typ == "boolean" && k == reflect.Bool:
			f.fields[prop] = fillField{index: i, kind: k}
		case typ == "integer" && isInt(k):
			f.fields[prop] = fillField{index: i, kind: k} // present in a call: decode the JSON
		default:
			return nil
		}
	}
	return f
}

func isInt(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// fill sets dst (a zero struct of the filler's type, addressable) from m;
// false when m holds a value it leaves to json.Unmarshal.
func (f *filler) fill(dst reflect.Value, m map[string]any) bool {
	for k, v := range m {
		ff, ok := f.fields[k]
		if !ok {
			return false
		}
		switch ff.kind {
		case reflect.String:
			s, ok := v.(string)
			if !ok {
				return false
			}
			dst.Field(ff.index).SetString(s)
		case reflect.Bool:
			b, ok := v.(bool)
			if !ok {
				return false
			}
			dst.Field(ff.index).SetBool(b)
		default:
			return false
		}
	}
	return true
}
