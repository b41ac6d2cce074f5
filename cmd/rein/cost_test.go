package main

import (
	"testing"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/anthropic"
	"github.com/reinhq/rein/model/openai"
)

// The config's built-in price table and the providers' own tables agree,
// model for model, so that no copy drifts from the other.
func TestDefaultPricesMatchTheProviders(t *testing.T) {
	t.Parallel()
	table := config.DefaultPrices()
	n := 0
	for name, p := range anthropic.DefaultPrices() {
		n++
		want := config.Price{Input: p.InputPerMTok, Output: p.OutputPerMTok, CacheRead: p.CacheReadPerMTok, CacheWrite: p.CacheWritePerMTok}
		if got := table["anthropic:"+name]; got != want {
			t.Errorf("anthropic:%s: config %+v, provider %+v", name, got, want)
		}
	}
	for name, p := range openai.DefaultPrices() {
		n++
		want := config.Price{Input: p.InputPerMTok, Output: p.OutputPerMTok, CacheRead: p.CacheReadPerMTok, CacheWrite: p.CacheWritePerMTok}
		if got := table["openai:"+name]; got != want {
			t.Errorf("openai:%s: config %+v, provider %+v", name, got, want)
		}
	}
	if n != len(table) {
		t.Errorf("the config has %d prices, the providers %d", len(table), n)
	}
}

func TestCostBreakdown(t *testing.T) {
	t.Parallel()
	p := pricingOf(config.Default(), "anthropic:claude-sonnet-4-5-20250929")
	b := p.breakdown(model.Usage{Input: 1_000_000, Output: 100_000, CacheRead: 2_000_000, CacheWrite: -5}, 5)
	if !b.Priced || b.InputUSD != 3 || b.OutputUSD != 1.5 || b.CacheReadUSD != 0.6 || b.CacheWriteUSD != 0 || b.CacheWriteTokens != 0 {
		t.Fatalf("%+v", b)
	}
	if got := p.cost()(model.Usage{Input: 1_000_000, Output: 100_000, CacheRead: 2_000_000}); got != b.TotalUSD {
		t.Fatalf("cost %g, breakdown total %g", got, b.TotalUSD)
	}
	if u := pricingOf(config.Default(), "openai:llama3"); u.known || u.cost() != nil {
		t.Fatal("an unknown model must not be priced")
	}
}
