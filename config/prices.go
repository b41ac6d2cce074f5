package config

import (
	"fmt"
	"math"

	"github.com/BurntSushi/toml"

	"github.com/reinhq/rein/price"
)

// checkPrices fills the cache prices a file left out and refuses entries
// without input and output prices: a forgotten output price would make
// every answer free, and the cost cap blind.
func checkPrices(prices price.Table, md toml.MetaData) error {
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
func validPrices(prices price.Table) error {
	for name, p := range prices {
		for _, v := range []float64{p.Input, p.Output, p.CacheRead, p.CacheWrite} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("prices.%q: %g is not a price: use USD per million tokens, 0 or more", name, v)
			}
		}
	}
	return nil
}
