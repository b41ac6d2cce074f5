package openai

import (
	"strings"

	"github.com/reinhq/rein/model"
)

// Price is what a model costs, in USD per million tokens.
type Price struct {
	InputPerMTok      float64 `toml:"input_per_mtok" json:"input_per_mtok"`
	OutputPerMTok     float64 `toml:"output_per_mtok" json:"output_per_mtok"`
	CacheReadPerMTok  float64 `toml:"cache_read_per_mtok" json:"cache_read_per_mtok"`
	CacheWritePerMTok float64 `toml:"cache_write_per_mtok" json:"cache_write_per_mtok"`
}

// DefaultPrices is a small built-in table of OpenAI's standard-tier prices,
// APPROXIMATE, taken from https://openai.com/api/pricing as of 2025-08. Prices
// change: the config's price table overrides these, and a local model costs
// nothing unless one is configured. OpenAI does not charge extra for writing
// the prompt cache, so CacheWrite is the input price.
func DefaultPrices() map[string]Price {
	p := func(in, cached, out float64) Price {
		return Price{InputPerMTok: in, OutputPerMTok: out, CacheReadPerMTok: cached, CacheWritePerMTok: in}
	}
	return map[string]Price{
		"gpt-5":        p(1.25, 0.125, 10),
		"gpt-5-mini":   p(0.25, 0.025, 2),
		"gpt-5-nano":   p(0.05, 0.005, 0.40),
		"gpt-4.1":      p(2, 0.50, 8),
		"gpt-4.1-mini": p(0.40, 0.10, 1.60),
		"gpt-4.1-nano": p(0.10, 0.025, 0.40),
		"gpt-4o":       p(2.50, 1.25, 10),
		"gpt-4o-mini":  p(0.15, 0.075, 0.60),
		"o3":           p(2, 0.50, 8),
		"o4-mini":      p(1.10, 0.275, 4.40),
	}
}

// PriceOf finds name's price in table: the exact name, else the longest
// entry that is name's prefix before a "-" (so a dated snapshot such as
// "gpt-4o-mini-2024-07-18" finds "gpt-4o-mini"). ok is false for an unknown
// model, whose cost is then 0: callers should say the cost is not tracked.
func PriceOf(table map[string]Price, name string) (p Price, ok bool) {
	if p, ok := table[name]; ok {
		return p, true
	}
	best := ""
	for k := range table {
		if len(k) > len(best) && strings.HasPrefix(name, k+"-") {
			best = k
		}
	}
	if best == "" {
		return Price{}, false
	}
	return table[best], true
}

// Cost is the USD cost of usage at price p.
func Cost(p Price, u model.Usage) float64 {
	const m = 1e6
	return float64(u.Input)*p.InputPerMTok/m +
		float64(u.Output)*p.OutputPerMTok/m +
		float64(u.CacheRead)*p.CacheReadPerMTok/m +
		float64(u.CacheWrite)*p.CacheWritePerMTok/m
}
