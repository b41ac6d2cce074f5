// Package contract is the task contract: the side effects a task may have,
// stated by the model before any untrusted data enters its context and
// approved by the user with one question. After the yes, calls inside the
// contract run without asking and side-effecting calls outside it are
// refused without asking (plan-then-execute: what the plan allows was fixed
// before an attacker could speak).
//
// A contract lists effects: a tool, how many times it may run, and for every
// argument the call gives, a binding: a literal value the task gave ("is"), a
// source the task names that the value must be traceable to ("from": the
// name of the tool whose results hold it, checked against the data-flow
// ledger), or "any" (only for arguments that name nothing the effect acts
// on, such as a subject line). The file format is JSON (docs/contract.md):
//
//	{"effects": [{"tool": "send_money", "times": 1,
//	  "args": {"recipient": {"from": "read_file"}, "amount": {"is": 98.70}, "subject": "any"}}]}
//
// This package holds the contract type, its parser, its five-second text,
// the matcher, the session's Holder, the gate (Gate) and the tool the model
// states a contract with (Tool). It will not infer a contract from a task,
// and it does not judge read-only calls: those are the other gates' job.
package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"unicode"

	"github.com/reinhq/rein/model/jsonx"
)

// MaxTimes is the most times one effect may be allowed to run.
const MaxTimes = 100

// Contract is the side effects a task may have. The zero Contract allows no
// side effect at all (a read-only task).
type Contract struct {
	Effects []Effect `json:"effects"`
}

// Effect is one side-effecting tool the task may call, Times times, with
// every argument it gives bound.
type Effect struct {
	Tool  string             `json:"tool"`
	Times int                `json:"times,omitempty"`
	Args  map[string]Binding `json:"args,omitempty"`
}

// Binding says what one argument may be.
type Binding struct {
	// Is is a literal value from the task (any JSON value).
	Is json.RawMessage `json:"is,omitempty"`
	// From names the source the value must be taken from: a tool whose
	// results hold it (read_file, list_transactions).
	From string `json:"from,omitempty"`
	// Of names the resource of that read: a value of the read call's
	// arguments (the path bill.txt, the order ZAM-4471); "" for any read
	// of From.
	Of string `json:"of,omitempty"`
	// Field names the labelled value of the read the value is ("amount"
	// for "Amount due: 98.70", the key "customer" of a JSON record).
	// With a field the binding is precise: the value must be that field's
	// one value in the read (flow.Ledger.FieldFrom), and it is then
	// in-contract for the data-flow gate too. Without one, the value need
	// only occur in what From returned, and the data-flow gate still
	// judges it.
	Field string `json:"field,omitempty"`
	// Where selects the record of a list that holds the field: the words
	// the record must hold ("rent" for the scheduled payment whose
	// subject is Rent). Only with Field.
	Where string `json:"where,omitempty"`
	// Any allows any value: only for an argument that names nothing the
	// effect acts on (a subject line). The gate refuses a proposal that
	// leaves a recipient, amount, path, URL, command or target free.
	Any bool `json:"-"`
}

// UnmarshalJSON reads {"is": V}, {"from": "tool"} or the string "any".
func (b *Binding) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		if s != "any" {
			return fmt.Errorf(`binding %q: write {"is": value}, {"from": "tool"} or "any"`, s)
		}
		*b = Binding{Any: true}
		return nil
	}
	type plain Binding
	var p plain
	if err := jsonx.DecodeStrict(data, &p); err != nil {
		return fmt.Errorf(`binding: %w (write {"is": value}, {"from": "tool"} or "any")`, err)
	}
	*b = Binding(p)
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (b Binding) MarshalJSON() ([]byte, error) {
	switch {
	case b.Any:
		return []byte(`"any"`), nil
	case b.From != "":
		m := map[string]string{"from": b.From}
		for k, v := range map[string]string{"of": b.Of, "field": b.Field, "where": b.Where} {
			if v != "" {
				m[k] = v
			}
		}
		return json.Marshal(m)
	}
	return json.Marshal(map[string]json.RawMessage{"is": b.Is})
}

// ErrContract marks a contract that cannot be used.
var ErrContract = errors.New("invalid contract")

// Parse reads a contract strictly: unknown fields, a missing tool, a count
// out of range and a binding that is not exactly one of is, from and any
// are errors that say where (line and column for JSON errors) and what to
// write instead. Times defaults to 1.
func Parse(data []byte) (*Contract, error) {
	var c Contract
	if err := jsonx.DecodeStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrContract, err)
	}
	if err := c.normalize(); err != nil {
		return nil, err
	}
	return &c, nil
}

// normalize checks c and fills in defaults.
func (c *Contract) normalize() error {
	for i := range c.Effects {
		e := &c.Effects[i]
		where := fmt.Sprintf("effect %d", i+1)
		if e.Tool == "" {
			return fmt.Errorf(`%w: %s has no "tool"; name the side-effecting tool it allows`, ErrContract, where)
		}
		where += " (" + e.Tool + ")"
		if e.Times == 0 {
			e.Times = 1
		}
		if e.Times < 0 || e.Times > MaxTimes {
			return fmt.Errorf(`%w: %s: "times" is %d; give a count from 1 to %d`, ErrContract, where, e.Times, MaxTimes)
		}
		for _, name := range slices.Sorted(mapsKeys(e.Args)) {
			b := e.Args[name]
			n := 0
			if len(b.Is) > 0 {
				n++
				if bytes.Equal(bytes.TrimSpace(b.Is), []byte("null")) {
					return fmt.Errorf(`%w: %s: argument %q: "is": null binds nothing; give the value, or leave the argument out`, ErrContract, where, name)
				}
			}
			if b.From != "" {
				n++
			}
			if b.Any {
				n++
			}
			if n != 1 {
				return fmt.Errorf(`%w: %s: argument %q: give exactly one of {"is": value}, {"from": "tool"} or "any"`, ErrContract, where, name)
			}
			if b.From == "" && (b.Of != "" || b.Field != "" || b.Where != "") {
				return fmt.Errorf(`%w: %s: argument %q: "of", "field" and "where" say which read a "from" value is taken from; give "from" too`, ErrContract, where, name)
			}
			if b.Where != "" && b.Field == "" {
				return fmt.Errorf(`%w: %s: argument %q: "where" selects the record that holds a "field"; give the field too`, ErrContract, where, name)
			}
		}
	}
	return nil
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Empty reports whether the contract allows no side effect.
func (c *Contract) Empty() bool { return c == nil || len(c.Effects) == 0 }

// String renders the contract in the short text a person reads in five
// seconds: one line per effect, its count and each argument's binding.
//
//	send_money ×1: recipient from read_file, amount = 98.7, subject any
func (c *Contract) String() string {
	if c.Empty() {
		return "no side effects"
	}
	lines := make([]string, 0, len(c.Effects))
	for _, e := range c.Effects {
		var b strings.Builder
		fmt.Fprintf(&b, "%s ×%d", e.Tool, e.Times)
		names := slices.Sorted(mapsKeys(e.Args))
		for i, n := range names {
			if i == 0 {
				b.WriteString(": ")
			} else {
				b.WriteString(", ")
			}
			b.WriteString(n)
			bd := e.Args[n]
			switch {
			case bd.Any:
				b.WriteString(" any")
			case bd.Field != "":
				fmt.Fprintf(&b, " from the %q of %s", clip(bd.Field), clip(bd.From))
				if bd.Of != "" {
					b.WriteString(" " + clip(bd.Of))
				}
				if bd.Where != "" {
					fmt.Fprintf(&b, " where %q", clip(bd.Where))
				}
			case bd.From != "":
				b.WriteString(" from " + clip(bd.From))
				if bd.Of != "" {
					b.WriteString(" " + clip(bd.Of))
				}
			default:
				b.WriteString(" = " + clip(string(compactJSON(bd.Is))))
			}
		}
		lines = append(lines, b.String())
	}
	return strings.Join(lines, "\n")
}

// clip keeps a rendered value short and printable.
func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return s
}

func compactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// Merge returns c with the effects of more added (an approved amendment).
func (c *Contract) Merge(more *Contract) *Contract {
	out := &Contract{}
	if c != nil {
		out.Effects = append(out.Effects, c.Effects...)
	}
	if more != nil {
		out.Effects = append(out.Effects, more.Effects...)
	}
	return out
}

// sameValue reports whether an argument's value equals a literal: numbers
// (JSON numbers, or strings holding one plain decimal number) compare by
// value, so 98.7 is "98.70"; strings compare with white space removed, so
// an IBAN may be grouped; anything else compares as compact JSON.
func sameValue(got any, lit json.RawMessage) bool {
	var want any
	dec := json.NewDecoder(bytes.NewReader(lit))
	dec.UseNumber()
	if err := dec.Decode(&want); err != nil {
		return false
	}
	if x, ok := number(got); ok {
		y, ok := number(want)
		return ok && x.Cmp(y) == 0
	}
	gs, ok1 := got.(string)
	ws, ok2 := want.(string)
	if ok1 && ok2 {
		return squash(gs) == squash(ws)
	}
	if ok1 != ok2 {
		return false
	}
	a, err1 := json.Marshal(got)
	b, err2 := json.Marshal(want)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// number reads a JSON number, or a string that is one plain decimal.
func number(v any) (*big.Rat, bool) {
	var s string
	switch n := v.(type) {
	case json.Number:
		s = n.String()
	case float64:
		s = fmt.Sprint(n)
	case string:
		s = strings.TrimSpace(n)
		if s == "" || strings.ContainsFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.' || r == '-') }) {
			return nil, false
		}
	default:
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
