package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/price"
)

// pricing is the price a session's model is charged at, from the config's
// price table.
type pricing struct {
	model string
	price price.Price
	known bool // false: the table has no price for the model; cost is not tracked
}

// pricingOf looks up m ("provider:name") in cfg's price table.
func pricingOf(cfg config.Config, m string) pricing {
	p, ok := cfg.Prices.Lookup(m)
	return pricing{model: m, price: p, known: ok}
}

// cost returns the session's cost function; nil when the model has no price.
func (p pricing) cost() func(model.Usage) float64 {
	if !p.known {
		return nil
	}
	return func(u model.Usage) float64 { return price.Of(p.price, price.Usage(u)).Total }
}

// costBreakdown is what a session cost, by kind of token. It is printed at
// the end of a session (stderr) and is the final JSON object's "cost".
type costBreakdown struct {
	Model  string `json:"model"`
	Priced bool   `json:"priced"`
	// Price is the price per million tokens charged; absent when not priced.
	Price            *price.Price `json:"price_per_mtok,omitempty"`
	InputTokens      int64        `json:"input_tokens"`
	OutputTokens     int64        `json:"output_tokens"`
	CacheReadTokens  int64        `json:"cache_read_tokens"`
	CacheWriteTokens int64        `json:"cache_write_tokens"`
	InputUSD         float64      `json:"input_usd"`
	OutputUSD        float64      `json:"output_usd"`
	CacheReadUSD     float64      `json:"cache_read_usd"`
	CacheWriteUSD    float64      `json:"cache_write_usd"`
	TotalUSD         float64      `json:"total_usd"`
	// MaxUSD is the cost cap (0: none).
	MaxUSD float64 `json:"max_usd"`
}

// breakdown prices usage u with price.Of. Negative counts count as zero.
func (p pricing) breakdown(u model.Usage, maxUSD float64) costBreakdown {
	b := costBreakdown{Model: p.model, Priced: p.known, MaxUSD: maxUSD,
		InputTokens: max(0, u.Input), OutputTokens: max(0, u.Output),
		CacheReadTokens: max(0, u.CacheRead), CacheWriteTokens: max(0, u.CacheWrite)}
	if !p.known {
		return b
	}
	charged := p.price
	b.Price = &charged
	c := price.Of(charged, price.Usage(u))
	b.InputUSD, b.OutputUSD, b.CacheReadUSD, b.CacheWriteUSD, b.TotalUSD = c.Input, c.Output, c.CacheRead, c.CacheWrite, c.Total
	return b
}

// print writes the breakdown for a human. A scripted model costs nothing
// and prints nothing.
func (b costBreakdown) print(w io.Writer) {
	if strings.HasPrefix(b.Model, "scripted:") {
		return
	}
	if !b.Priced {
		fmt.Fprintf(w, "rein: cost not tracked: no price for %s, so --max-cost-usd cannot stop it (add [prices.%q] with input and output, USD per million tokens, to your config)\n", termsafe.Line(b.Model), termsafe.Line(b.Model))
		return
	}
	fmt.Fprintf(w, "rein: cost $%.4f", b.TotalUSD)
	if b.MaxUSD > 0 {
		fmt.Fprintf(w, " of $%.2f", b.MaxUSD)
	}
	fmt.Fprintf(w, ": input %d tokens $%.4f, output %d tokens $%.4f, cache read %d tokens $%.4f, cache write %d tokens $%.4f\n",
		b.InputTokens, b.InputUSD, b.OutputTokens, b.OutputUSD, b.CacheReadTokens, b.CacheReadUSD, b.CacheWriteTokens, b.CacheWriteUSD)
}
