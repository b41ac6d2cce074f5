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
// unknown fields and trailing data.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Explain(data, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		off := dec.InputOffset()
		line, col := Position(data, off)
		return fmt.Errorf("line %d, column %d: unexpected data after the JSON value", line, col)
	}
	return nil
}

// Explain turns an encoding/json error into one that names the place and the
// problem. data is the input that produced err.
func Explain(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return errors.New("empty input: expected a JSON value")
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := Position(data, int64(len(data)))
		return fmt.Errorf("line %d, column %d: the JSON ends too early (a missing bracket, brace or quote?)", line, col)
	case errors.As(err, &syn):
		line, col := Position(data, syn.Offset)
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
