// Package jsonx decodes JSON strictly and explains what was wrong with it in
// terms a person can act on: the line and column of a syntax error, the name
// of an unknown field, the field whose value has the wrong type.
package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DecodeStrict decodes exactly one JSON value from data into v, rejecting
// unknown fields, trailing data, and objects with two keys that differ at
// most in case (encoding/json would let the last one win, even into a map).
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Explain(data, err)
	}
	// Anything but JSON space after the value is trailing data; point at
	// where it starts (dec.Token would point past a well-formed token).
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		line, col := Position(data, int64(len(data)-len(rest)))
		return fmt.Errorf("line %d, column %d: unexpected data after the JSON value", line, col)
	}
	return checkKeys(data)
}

// checkKeys rejects an object holding two keys that encoding/json would take
// for one field: it matches names regardless of case and keeps the last
// value, so {"to":"a@x.com","TO":"b@y.com"} would show a person one address
// and hand the tool another. data is one valid JSON value.
func checkKeys(data []byte) error {
	type level struct {
		seen map[string]string // folded key -> key as written; nil in an array
		key  bool              // the next token of this object is a key
	}
	var stack []level
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // io.EOF; Decode has already reported anything else
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{seen: map[string]string{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			if len(stack) == 0 {
				continue
			}
			if top := &stack[len(stack)-1]; top.seen != nil && top.key {
				k := tok.(string)
				folded := strings.ToUpper(k) // as encoding/json folds field names
				if prev, dup := top.seen[folded]; dup {
					line, col := Position(data, keyStart(data, dec.InputOffset()))
					if prev == k {
						return fmt.Errorf("line %d, column %d: key %q appears twice in one object; keep one", line, col, k)
					}
					return fmt.Errorf("line %d, column %d: keys %q and %q name the same field; keep one", line, col, prev, k)
				}
				top.seen[folded] = k
				top.key = false
				continue
			}
		}
		// A value ended: the next token of the enclosing object is a key.
		if len(stack) > 0 && stack[len(stack)-1].seen != nil {
			stack[len(stack)-1].key = true
		}
	}
}

// keyStart returns the offset of the opening quote of the string that ends
// just before end.
func keyStart(data []byte, end int64) int64 {
	for i := end - 2; i > 0; i-- {
		if data[i] != '"' {
			continue
		}
		n := 0
		for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
	}
	return 0
}

// Explain turns an encoding/json error into one that names the place and the
// problem. data is the input that produced err.
func Explain(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return errors.New("empty input: expected a JSON value")
	case errors.Is(err, io.ErrUnexpectedEOF),
		errors.As(err, &syn) && syn.Error() == "unexpected end of JSON input": // from json.Unmarshal
		line, col := Position(data, int64(len(data)))
		return fmt.Errorf("line %d, column %d: the JSON ends too early (a missing bracket, brace or quote?)", line, col)
	case errors.As(err, &syn):
		// Offset counts the bytes read including the offending one.
		line, col := Position(data, max(syn.Offset-1, 0))
		return fmt.Errorf("line %d, column %d: %s", line, col, syn.Error())
	case errors.As(err, &typ):
		line, col := Position(data, typ.Offset)
		field := typ.Field
		if field == "" {
			field = "the value"
		} else {
			field = fmt.Sprintf("%q", field)
		}
		return fmt.Errorf("line %d, column %d: %s must be %s, not a JSON %s", line, col, field, typeName(typ.Type.String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return err
}

func typeName(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "struct"), strings.Contains(goType, "."):
		return "an object"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	}
	return goType
}

// Position converts a byte offset into a 1-based line and column.
func Position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// IsObject reports whether raw holds a JSON object (after leading space).
func IsObject(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(raw)
}

// Kind names the JSON type of a valid value: object, array, string, number,
// boolean or null; "invalid JSON" otherwise.
func Kind(raw []byte) string {
	if !json.Valid(raw) {
		return "invalid JSON"
	}
	t := bytes.TrimLeft(raw, " \t\r\n")
	switch t[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
