package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/alecthomas/kong"

	"github.com/reinhq/rein/config"
)

// capValue is what a cap flag holds: a count, an amount or a duration.
type capValue interface {
	~int | ~int64 | ~float64 // time.Duration is an ~int64
}

// capFlag is a cap given on the command line: a positive value, or the
// word "none" (no cap, held as 0 as in config.Limits). 0 is refused, since
// "--max-steps 0" reads as "no steps" and used to mean the opposite;
// negatives, NaN and Inf are refused with what is accepted.
type capFlag[T capValue] struct {
	set bool
	v   T
}

var _ kong.MapperValue = (*capFlag[int])(nil)

// Decode reads the flag's value. A value that looks like a flag ("-1")
// is taken as the value, so a negative cap gets the same message written
// with a space or an equals sign.
func (c *capFlag[T]) Decode(ctx *kong.DecodeContext) error {
	t := ctx.Scan.Pop()
	if t.IsEOL() {
		return fmt.Errorf("needs a value: %s", c.accepted())
	}
	s := t.String()
	if s == config.None {
		c.set, c.v = true, 0
		return nil
	}
	v, err := parseCap[T](s)
	if err != nil {
		return fmt.Errorf("%q is %v: %s", s, err, c.accepted())
	}
	c.set, c.v = true, v
	return nil
}

var (
	errZero     = errors.New("not a cap (0 would mean nothing may run)")
	errNegative = errors.New("negative")
	errNotValue = errors.New("not a number")
	errNotWall  = errors.New("not a duration")
)

func parseCap[T capValue](s string) (T, error) {
	var zero T
	var v T
	switch p := any(&v).(type) {
	case *time.Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return zero, errNotWall
		}
		*p = d
	case *float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return zero, errNotValue
		}
		*p = f
	case *int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return zero, errNotValue
		}
		*p = n
	case *int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return zero, errNotValue
		}
		*p = n
	}
	switch {
	case v < 0:
		return zero, errNegative
	case v == 0:
		return zero, errZero
	}
	return v, nil
}

// accepted says what the flag takes.
func (c *capFlag[T]) accepted() string {
	switch any(c.v).(type) {
	case time.Duration:
		return "pass a positive duration like 90s or 30m, or none for no cap"
	case float64:
		return "pass a positive amount in USD like 2.50, or none for no cap"
	}
	return "pass a positive whole number, or none for no cap"
}

// apply sets *dst when the flag was given.
func (c capFlag[T]) apply(dst *T) {
	if c.set {
		*dst = c.v
	}
}
