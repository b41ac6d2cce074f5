// Package jsonx decodes JSON strictly and explains what was wrong with it in
// terms a person can act on: the line and column of a syntax error, the name
// of an unknown field, the field whose value has the wrong type. It is a
// leaf (the standard library only) beside package model, whose scripted
// model reads its scripts with it; tools and gates use it for arguments.
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

// CheckKeys rejects an object, at any depth of data, holding the same key
// twice or two keys that differ only in case. data must be valid JSON.
func CheckKeys(data []byte) error { return checkKeys(data) }

// checkKeys rejects an object holding two keys that encoding/json would take
// for one field: it matches names regardless of case and keeps the last
// value, so {"to":"a@x.com","TO":"b@y.com"} would show a person one address
// and hand the tool another. data is one valid JSON value (Decode has
// checked it), which lets this be a plain byte scan: it runs on every tool
// call, and json.Decoder.Token would cost several times more.
func checkKeys(data []byte) error {
	// The keys of every open object, innermost last, in one slice; each
	// level remembers where its keys start. Keys without escapes are
	// sub-slices of data. Tool arguments are small and flat, so the
	// buffers on the stack are usually all the memory this needs.
	type level struct {
		obj   bool
		start int // index of the level's first key in keys
	}
	var stackBuf [8]level
	var keyBuf [16][]byte
	stack, keys := stackBuf[:0], keyBuf[:0]
	expectKey := false
	for i := 0; i < len(data); {
		switch data[i] {
		case '{':
			stack = append(stack, level{obj: true, start: len(keys)})
			expectKey = true
			i++
		case '[':
			stack = append(stack, level{start: len(keys)})
			expectKey = false
			i++
		case '}', ']':
			if len(stack) > 0 {
				keys = keys[:stack[len(stack)-1].start]
				stack = stack[:len(stack)-1]
			}
			expectKey = false
			i++
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].obj
			i++
		case '"':
			end := stringEnd(data, i)
			if expectKey {
				k := data[i+1 : end-1]
				if bytes.IndexByte(k, '\\') >= 0 {
					k = []byte(unquote(data[i:end]))
				}
				for _, prev := range keys[stack[len(stack)-1].start:] {
					if bytes.EqualFold(prev, k) {
						line, col := Position(data, int64(i))
						if bytes.Equal(prev, k) {
							return fmt.Errorf("line %d, column %d: key %q appears twice in one object; keep one", line, col, k)
						}
						return fmt.Errorf("line %d, column %d: keys %q and %q name the same field; keep one", line, col, prev, k)
					}
				}
				keys = append(keys, k)
				expectKey = false
			}
			i = end
		default:
			i++
		}
	}
	return nil
}

// stringEnd returns the offset just past the string that starts at data[i].
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// unquote decodes a JSON string token; escapes are rare in keys.
func unquote(tok []byte) string {
	if bytes.IndexByte(tok, '\\') < 0 {
		return string(tok[1 : len(tok)-1])
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return string(tok)
	}
	return s
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
