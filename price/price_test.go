package price_test

import (
	"testing"

	"github.com/reinhq/rein/price"
)

func TestLookup(t *testing.T) {
	t.Parallel()
	table := price.Defaults()
	for _, tc := range []struct {
		model string
		want  string // the key whose price it gets; "" for none
	}{
		{"anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"},
		{"anthropic:claude-sonnet-4-5-20250929", "anthropic:claude-sonnet-4-5"},
		{"anthropic:claude-3-5-haiku-latest", "anthropic:claude-3-5-haiku"},
		{"anthropic:claude-opus-4-1-latest", "anthropic:claude-opus-4-1"},
		{"anthropic:claude-opus-4-5", "anthropic:claude-opus-4-5"},
		{"openai:gpt-4o-mini", "openai:gpt-4o-mini"},
		{"openai:gpt-4o-mini-2024-07-18", "openai:gpt-4o-mini"},
		{"openai:gpt-4o-2024-08-06", "openai:gpt-4o"},
		{"openai:gpt-4.1-nano", "openai:gpt-4.1-nano"},
		// Unknown: no price, and no family by accident.
		{"openai:gpt-4ox", ""},
		{"openai:llama3.1:8b", ""},
		{"openai:qwen2.5-coder", ""},
		{"anthropic:claude-sonnet-5", ""},
		{"anthropic:my-local-model", ""},
		{"claude-sonnet-4-5", ""}, // no provider: not a key
		{"scripted:x.json", ""},
		{"", ""},
	} {
		p, ok := table.Lookup(tc.model)
		if ok != (tc.want != "") || p != table[tc.want] {
			t.Errorf("Lookup(%q) = %+v, %v; want the price of %q", tc.model, p, ok, tc.want)
		}
	}
	// A longer family wins over its prefix.
	if p, _ := table.Lookup("openai:gpt-4.1-mini-2025-04-14"); p != table["openai:gpt-4.1-mini"] {
		t.Errorf("gpt-4.1-mini snapshot priced as %+v", p)
	}
}

func TestDefaultsPlausible(t *testing.T) {
	t.Parallel()
	table := price.Defaults()
	for name, p := range table {
		if p.Input <= 0 || p.Output < p.Input || p.CacheRead > p.Input || p.CacheWrite < p.Input {
			t.Errorf("%s: implausible price %+v", name, p)
		}
	}
	delete(table, "openai:gpt-4o")
	if _, ok := price.Defaults()["openai:gpt-4o"]; !ok {
		t.Error("Defaults shares its map between calls")
	}
}

func TestOf(t *testing.T) {
	t.Parallel()
	p := price.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	for _, tc := range []struct {
		name string
		p    price.Price
		u    price.Usage
		want price.Cost
	}{
		{"each kind at its price", p, price.Usage{Input: 1_000_000, Output: 100_000, CacheRead: 2_000_000, CacheWrite: 1_000_000},
			price.Cost{Input: 3, Output: 1.5, CacheRead: 0.6, CacheWrite: 3.75, Total: 8.85}},
		{"no price costs nothing", price.Price{}, price.Usage{Input: 1e6, Output: 1e6},
			price.Cost{}},
		{"negative counts count as zero", p, price.Usage{Input: -5, Output: -1, CacheRead: -1, CacheWrite: -1},
			price.Cost{}},
	} {
		got := price.Of(tc.p, tc.u)
		if d := got.Total - tc.want.Total; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: total %g, want %g", tc.name, got.Total, tc.want.Total)
		}
		got.Total = tc.want.Total
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
