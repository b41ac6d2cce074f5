// Package suites holds rein's evaluation suites as data: one scenario file
// per suite (docs/eval-format.md), embedded so that `rein eval` runs from any
// directory. Package eval/scenario parses and runs them.
package suites

import "embed"

// FS holds the scenario files, *.json.
//
//go:embed *.json
var FS embed.FS
