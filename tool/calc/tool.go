package calc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/reinhq/rein/tool"
)

// Args are the calc tool's arguments.
type Args struct {
	Expression string `json:"expression"`
}

// Check rejects an empty expression before the tool runs.
func (a *Args) Check() error {
	if a.Expression == "" {
		return errors.New(`"expression" is required: give an arithmetic expression such as 3*45 + 2*120`)
	}
	return nil
}

var schema = json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string","minLength":1,"maxLength":4096,"description":"Arithmetic with numbers, + - * / and parentheses, e.g. 3*45 + 2*120"}},"required":["expression"],"additionalProperties":false}`)

// New returns the calc tool: exact arithmetic on an expression.
func New() tool.Tool {
	return tool.New(tool.Spec{
		Name: "calc",
		Description: "Evaluate an arithmetic expression exactly and return the number. " +
			"Supports integers and decimals, + - * / and parentheses. " +
			"No variables, functions or exponents. Use it for every sum instead of adding in your head.",
		Schema:   schema,
		Effect:   tool.ReadOnly,
		Computes: true, // exact arithmetic on the expression: nothing from outside
	}, func(_ context.Context, a Args) (string, error) {
		v, err := Eval(a.Expression)
		if err != nil {
			return "", err
		}
		return Format(v), nil
	})
}
