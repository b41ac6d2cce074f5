// Package prompt holds rein's system prompt, written in our own words and
// kept in one embedded file (system.md): where the agent works, what is
// data and what is an instruction, how to plan, how to replan after an
// error, and how to decide it is done. It is checked for what it must
// contain, and it interpolates nothing: no environment, no secrets.
package prompt

import (
	_ "embed"
)

//go:embed system.md
var system string

// System returns the system prompt.
func System() string { return system }
