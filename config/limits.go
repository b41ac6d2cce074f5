package config

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// None is how a file (and a flag) says "no cap" for a limit: 0 is refused,
// since a cap of 0 reads as "nothing may run" and silently meant the
// opposite. Inside Limits, no cap is held as 0.
const None = "none"

// UnmarshalTOML decodes the [limits] table: every cap is a positive value
// or the string "none" (no cap); 0, a negative or NaN value, and a value of
// the wrong type are errors that name the key and what it accepts.
func (l *Limits) UnmarshalTOML(data any) error {
	table, ok := data.(map[string]any)
	if !ok {
		return fmt.Errorf("limits must be a table, like [limits] max_steps = 40")
	}
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := table[k]
		var err error
		switch k {
		case "max_steps":
			err = capInt(k, v, func(n int64) { l.MaxSteps = int(n) })
		case "max_tool_calls":
			err = capInt(k, v, func(n int64) { l.MaxToolCalls = int(n) })
		case "max_tokens":
			err = capInt(k, v, func(n int64) { l.MaxTokens = n })
		case "max_cost_usd":
			err = capCost(k, v, &l.MaxCostUSD)
		case "timeout":
			err = capWall(k, v, &l.Timeout)
		default:
			return &UnknownKeyError{Key: "limits." + k}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// UnknownKeyError is a key rein does not know.
type UnknownKeyError struct{ Key string }

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("unknown key %s (known: %s)", e.Key, strings.Join(Keys(), ", "))
}

func capInt(key string, v any, set func(int64)) error {
	const want = `a positive whole number, or "none" for no cap`
	switch n := v.(type) {
	case string:
		if n == None {
			set(0)
			return nil
		}
		return fmt.Errorf("limits.%s is %q: write %s", key, n, want)
	case int64:
		if n <= 0 {
			return fmt.Errorf("limits.%s is %d: write %s", key, n, want)
		}
		if n > math.MaxInt32 && key != "max_tokens" {
			return fmt.Errorf("limits.%s is %d: too large; write %s", key, n, want)
		}
		set(n)
		return nil
	}
	return fmt.Errorf("limits.%s is %s: write %s", key, tomlType(v), want)
}

func capCost(key string, v any, dst *float64) error {
	const want = `a positive amount in USD, like 2.5, or "none" for no cap`
	var f float64
	switch n := v.(type) {
	case string:
		if n == None {
			*dst = 0
			return nil
		}
		return fmt.Errorf("limits.%s is %q: write %s", key, n, want)
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		return fmt.Errorf("limits.%s is %s: write %s", key, tomlType(v), want)
	}
	if !(f > 0) || math.IsInf(f, 0) {
		return fmt.Errorf("limits.%s is %v: write %s", key, f, want)
	}
	*dst = f
	return nil
}

func capWall(key string, v any, dst *Duration) error {
	const want = `a positive duration like "30m" or "1h30m", or "none" for no cap`
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("limits.%s is %s: write %s", key, tomlType(v), want)
	}
	if s == None {
		*dst = 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("limits.%s is %q: write %s", key, s, want)
	}
	*dst = Duration(d)
	return nil
}

// tomlType names a decoded TOML value's type for an error message.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}
