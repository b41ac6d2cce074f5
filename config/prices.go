package config

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/reinhq/rein/model/anthropic"
	"github.com/reinhq/rein/model/openai"
)

// Price is what a model costs, in USD per million tokens. In a file:
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

// DefaultPrices is the built-in price table, keyed "provider:model": the
// providers' own tables (anthropic.DefaultPrices, openai.DefaultPrices:
// approximate list prices as last checked), so there is one copy of each
// figure. Prices change: a config file's [prices] overrides them, and a
// model not in the table (a local one) has no price, so its cost is not
// tracked unless one is configured. It returns a new map.
func DefaultPrices() map[string]Price {
	table := map[string]Price{}
	for name, p := range anthropic.DefaultPrices() {
		table["anthropic:"+name] = Price{Input: p.InputPerMTok, Output: p.OutputPerMTok, CacheRead: p.CacheReadPerMTok, CacheWrite: p.CacheWritePerMTok}
	}
	for name, p := range openai.DefaultPrices() {
		table["openai:"+name] = Price{Input: p.InputPerMTok, Output: p.OutputPerMTok, CacheRead: p.CacheReadPerMTok, CacheWrite: p.CacheWritePerMTok}
	}
	return table
}

// dated matches a pinned model's date suffix ("-20250929", "-2024-07-18")
// and a "-latest" alias suffix.
var dated = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)

// PriceOf finds the price of model ("provider:name") in the table: the
// exact key, else the key without a date or -latest suffix, else the
// longest key that is the name's prefix before a "-" (a dated snapshot
// finds its family). ok is false when the model has no price.
func (c Config) PriceOf(model string) (p Price, ok bool) {
	if p, ok = c.Prices[model]; ok {
		return p, true
	}
	if p, ok = c.Prices[dated.ReplaceAllString(model, "")]; ok {
		return p, true
	}
	best := ""
	for k := range c.Prices {
		if len(k) > len(best) && strings.HasPrefix(model, k+"-") {
			best = k
		}
	}
	if best == "" {
		return Price{}, false
	}
	return c.Prices[best], true
}

// checkPrices fills the cache prices a file left out and refuses entries
// without input and output prices: a forgotten output price would make
// every answer free, and the cost cap blind.
func checkPrices(prices map[string]Price, md toml.MetaData) error {
	for name, p := range prices {
		if !md.IsDefined("prices", name) {
			continue // from an earlier file or the defaults
		}
		for _, k := range []string{"input", "output"} {
			if !md.IsDefined("prices", name, k) {
				return fmt.Errorf("prices.%q has no %s price: give input and output (USD per million tokens)", name, k)
			}
		}
		if !md.IsDefined("prices", name, "cache_read") {
			p.CacheRead = p.Input
		}
		if !md.IsDefined("prices", name, "cache_write") {
			p.CacheWrite = p.Input
		}
		prices[name] = p
	}
	return nil
}

// validPrices rejects negative and non-finite prices.
func validPrices(prices map[string]Price) error {
	for name, p := range prices {
		for _, v := range []float64{p.Input, p.Output, p.CacheRead, p.CacheWrite} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("prices.%q: %g is not a price: use USD per million tokens, 0 or more", name, v)
			}
		}
	}
	return nil
}
