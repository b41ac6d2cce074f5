package config_test

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/price"
)

func TestPrices(t *testing.T) {
	t.Parallel()
	user := file(t, `
[prices."anthropic:claude-sonnet-4-5"]
input = 2.5
output = 12
cache_read = 0.25
cache_write = 3

[prices."openai:llama3.1"]
input = 0.1
output = 0.2
`)
	c, err := config.Load(user)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model string
		want  price.Price
		ok    bool
	}{
		{"anthropic:claude-sonnet-4-5", price.Price{Input: 2.5, Output: 12, CacheRead: 0.25, CacheWrite: 3}, true},
		{"anthropic:claude-sonnet-4-5-20250929", price.Price{Input: 2.5, Output: 12, CacheRead: 0.25, CacheWrite: 3}, true},
		// The cache prices a file leaves out are the input price.
		{"openai:llama3.1", price.Price{Input: 0.1, Output: 0.2, CacheRead: 0.1, CacheWrite: 0.1}, true},
		// The defaults the file does not touch stay.
		{"anthropic:claude-haiku-4-5", price.Price{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}, true},
		{"anthropic:claude-opus-4-1-latest", price.Price{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75}, true},
		{"openai:gpt-4o-mini-2024-07-18", price.Price{Input: 0.15, Output: 0.6, CacheRead: 0.075, CacheWrite: 0.15}, true},
		{"openai:gpt-4o", price.Price{Input: 2.5, Output: 10, CacheRead: 1.25, CacheWrite: 2.5}, true},
		// Unknown: no price, and no family by accident.
		{"openai:qwen2.5-coder", price.Price{}, false},
		{"anthropic:claude-sonnet-5", price.Price{}, false},
		{"scripted:x.json", price.Price{}, false},
	} {
		got, ok := c.Prices.Lookup(tc.model)
		if ok != tc.ok || got != tc.want {
			t.Errorf("Prices.Lookup(%s) = %+v, %v; want %+v, %v", tc.model, got, ok, tc.want, tc.ok)
		}
	}
	if p, _ := config.Default().Prices.Lookup("anthropic:claude-sonnet-4-5"); p.Input != 3 {
		t.Errorf("loading a file changed the defaults: %+v", p)
	}
}

func TestPricesRejected(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		toml   string
		narrow bool
		want   string
	}{
		"no output":      {`[prices."openai:x"]` + "\ninput = 1\n", false, "no output price"},
		"no input":       {`[prices."openai:x"]` + "\noutput = 1\n", false, "no input price"},
		"negative":       {`[prices."openai:x"]` + "\ninput = -1\noutput = 1\n", false, "not a price"},
		"nan":            {`[prices."openai:x"]` + "\ninput = nan\noutput = 1\n", false, "not a price"},
		"unknown field":  {`[prices."openai:x"]` + "\ninput = 1\noutput = 1\nreasoning = 2\n", false, "unknown key"},
		"project lowers": {`[prices."anthropic:claude-sonnet-4-5"]` + "\ninput = 0\noutput = 0\n", true, "prices change what the cost cap counts"},
	} {
		src := file(t, c.toml)
		src.Narrow = c.narrow
		if _, err := config.Load(src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", name, err, c.want)
		}
	}
}
