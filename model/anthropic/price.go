package anthropic

import (
	"regexp"

	"github.com/reinhq/rein/model"
)

// Price is what a model costs, in USD per million tokens.
type Price struct {
	InputPerMTok      float64 `json:"input_per_mtok" toml:"input_per_mtok"`
	OutputPerMTok     float64 `json:"output_per_mtok" toml:"output_per_mtok"`
	CacheReadPerMTok  float64 `json:"cache_read_per_mtok" toml:"cache_read_per_mtok"`
	CacheWritePerMTok float64 `json:"cache_write_per_mtok" toml:"cache_write_per_mtok"`
}

// DefaultPrices is a small built-in table for well-known models, keyed by the
// API's model alias. The figures are approximate list prices from Anthropic's
// public pricing page as last checked for this table (2025); cache writes are
// the 5-minute rate (1.25 × input), cache reads 0.1 × input. Prices change:
// users should override them in the config. It returns a new map each time.
func DefaultPrices() map[string]Price {
	opus4 := Price{InputPerMTok: 15, OutputPerMTok: 75, CacheReadPerMTok: 1.5, CacheWritePerMTok: 18.75}
	opus45 := Price{InputPerMTok: 5, OutputPerMTok: 25, CacheReadPerMTok: 0.5, CacheWritePerMTok: 6.25}
	sonnet := Price{InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3.75}
	haiku45 := Price{InputPerMTok: 1, OutputPerMTok: 5, CacheReadPerMTok: 0.1, CacheWritePerMTok: 1.25}
	haiku35 := Price{InputPerMTok: 0.8, OutputPerMTok: 4, CacheReadPerMTok: 0.08, CacheWritePerMTok: 1}
	return map[string]Price{
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
	}
}

// dated matches the date suffix of a pinned model name ("-20250929") and a
// "-latest" alias suffix.
var dated = regexp.MustCompile(`-(\d{8}|latest)$`)

// PriceFor finds name in table, first as given, then without a date or
// "-latest" suffix. ok is false for an unknown model: its cost is then 0, and
// the caller should say that the cost is not tracked.
func PriceFor(table map[string]Price, name string) (p Price, ok bool) {
	if p, ok = table[name]; ok {
		return p, true
	}
	p, ok = table[dated.ReplaceAllString(name, "")]
	return p, ok
}

// Cost is the price in USD of usage u at price p. Negative token counts
// count as zero.
func Cost(p Price, u model.Usage) float64 {
	return (float64(max(0, u.Input))*p.InputPerMTok +
		float64(max(0, u.Output))*p.OutputPerMTok +
		float64(max(0, u.CacheRead))*p.CacheReadPerMTok +
		float64(max(0, u.CacheWrite))*p.CacheWritePerMTok) / 1e6
}
