// Package price is rein's one price table and cost function: what a model
// costs per million tokens, the built-in table of well-known models keyed
// "provider:model", the lookup that finds a dated snapshot's family, and
// the cost of a call's token usage, by kind of token.
//
// The built-in figures are approximate list prices as last checked; prices
// change, so a config file's [prices] table overrides them (package config
// reads it), and a model not in the table (a local one) has no price: its
// cost is not tracked unless one is configured.
//
// The package imports nothing of rein's: a provider needs no price, and the
// config and the CLI both read this one.
package price

import (
	"regexp"
	"strings"
	"sync"
)

// Price is what a model costs, in USD per million tokens. In a config file:
//
//	[prices."anthropic:claude-sonnet-4-5"]
//	input = 3.0
//	output = 15.0
//	cache_read = 0.3    # optional: the input price when left out
//	cache_write = 3.75  # optional: the input price when left out
type Price struct {
	Input      float64 `toml:"input" json:"input"`
	Output     float64 `toml:"output" json:"output"`
	CacheRead  float64 `toml:"cache_read" json:"cache_read"`
	CacheWrite float64 `toml:"cache_write" json:"cache_write"`
}

// Table holds prices keyed "provider:model", e.g. "openai:gpt-4o".
type Table map[string]Price

// Defaults returns the built-in table, a new map each call.
//
// Anthropic's figures are from its public pricing page (2025), keyed by the
// API's model alias; cache writes are the 5-minute rate (1.25 × input),
// cache reads 0.1 × input. OpenAI's are its standard tier from
// https://openai.com/api/pricing as of 2025-08; OpenAI does not charge extra
// for writing the prompt cache, so the cache-write price is the input price.
func Defaults() Table {
	t := Table{}
	opus4 := Price{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75}
	opus45 := Price{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25}
	sonnet := Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	haiku45 := Price{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}
	haiku35 := Price{Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1}
	for name, p := range map[string]Price{
		"claude-opus-4-5":   opus45,
		"claude-opus-4-1":   opus4,
		"claude-opus-4-0":   opus4,
		"claude-opus-4":     opus4,
		"claude-sonnet-4-5": sonnet,
		"claude-sonnet-4-0": sonnet,
		"claude-sonnet-4":   sonnet,
		"claude-3-7-sonnet": sonnet,
		"claude-haiku-4-5":  haiku45,
		"claude-3-5-haiku":  haiku35,
	} {
		t["anthropic:"+name] = p
	}
	oai := func(in, cached, out float64) Price {
		return Price{Input: in, Output: out, CacheRead: cached, CacheWrite: in}
	}
	for name, p := range map[string]Price{
		"gpt-5":        oai(1.25, 0.125, 10),
		"gpt-5-mini":   oai(0.25, 0.025, 2),
		"gpt-5-nano":   oai(0.05, 0.005, 0.40),
		"gpt-4.1":      oai(2, 0.50, 8),
		"gpt-4.1-mini": oai(0.40, 0.10, 1.60),
		"gpt-4.1-nano": oai(0.10, 0.025, 0.40),
		"gpt-4o":       oai(2.50, 1.25, 10),
		"gpt-4o-mini":  oai(0.15, 0.075, 0.60),
		"o3":           oai(2, 0.50, 8),
		"o4-mini":      oai(1.10, 0.275, 4.40),
	} {
		t["openai:"+name] = p
	}
	return t
}

// dated matches a pinned model's date suffix ("-20250929", "-2024-07-18")
// and a "-latest" alias suffix.
var dated = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)
})

// Lookup finds the price of model ("provider:name"): the exact key, else the
// key without a date or -latest suffix, else the longest key that is the
// name's prefix before a "-" (so "openai:gpt-4o-mini-2024-07-18" finds
// "openai:gpt-4o-mini"). ok is false when the model has no price: the
// caller should say that its cost is not tracked.
func (t Table) Lookup(model string) (p Price, ok bool) {
	if p, ok = t[model]; ok {
		return p, true
	}
	if p, ok = t[dated().ReplaceAllString(model, "")]; ok {
		return p, true
	}
	best := ""
	for k := range t {
		if len(k) > len(best) && strings.HasPrefix(model, k+"-") {
			best = k
		}
	}
	if best == "" {
		return Price{}, false
	}
	return t[best], true
}

// Usage is the tokens a session was billed for, by kind. It has the fields
// of model.Usage, so price.Usage(u) converts one.
type Usage struct {
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
}

// Cost is what a usage cost at a price, in USD, by kind of token.
type Cost struct {
	Input      float64 `json:"input_usd"`
	Output     float64 `json:"output_usd"`
	CacheRead  float64 `json:"cache_read_usd"`
	CacheWrite float64 `json:"cache_write_usd"`
	Total      float64 `json:"total_usd"`
}

// Of is the cost of usage u at price p. Negative token counts count as zero.
func Of(p Price, u Usage) Cost {
	const perM = 1e6
	c := Cost{
		Input:      float64(max(0, u.Input)) * p.Input / perM,
		Output:     float64(max(0, u.Output)) * p.Output / perM,
		CacheRead:  float64(max(0, u.CacheRead)) * p.CacheRead / perM,
		CacheWrite: float64(max(0, u.CacheWrite)) * p.CacheWrite / perM,
	}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	return c
}
