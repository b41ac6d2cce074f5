package main

import (
	"testing"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/model"
)

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
