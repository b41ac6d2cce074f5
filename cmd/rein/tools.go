package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/internal/termsafe"
)

type toolsCmd struct {
	JSON bool `name:"json" help:"Print one JSON object per tool, with its argument schema."`
}

type toolInfo struct {
	Name        string          `json:"name"`
	Effect      string          `json:"effect"`
	Default     bool            `json:"default"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

func (c *toolsCmd) Run(e env) error {
	reg := knownTools()
	defaults := config.DefaultTools()
	enc := json.NewEncoder(e.stdout)
	for _, name := range reg.Names() {
		t, _ := reg.Lookup(name)
		spec := t.Spec()
		info := toolInfo{Name: name, Effect: spec.Effect.String(), Default: slices.Contains(defaults, name),
			Description: spec.Description, Schema: spec.Schema}
		if c.JSON {
			if err := enc.Encode(info); err != nil {
				return err
			}
			continue
		}
		mark := " "
		if info.Default {
			mark = "*"
		}
		first, _, _ := strings.Cut(spec.Description, "\n")
		if i := strings.Index(first, ". "); i > 0 {
			first = first[:i+1]
		}
		fmt.Fprintf(e.stdout, "%s %-17s %-12s %s\n", termsafe.Line(mark), termsafe.Line(name), spec.Effect, termsafe.Line(first))
	}
	if !c.JSON {
		fmt.Fprintln(e.stdout, "\n* on the default allowlist (tools.allow). Whether a call runs, asks or is refused is the gates' decision: see docs/policy.md.")
	}
	return nil
}
