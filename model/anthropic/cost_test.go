package anthropic

import "github.com/reinhq/rein/model"

// costAt is a session's cost function at a price in USD per million tokens,
// for the loop tests' budget. rein's own is package price: the provider
// keeps no price.
func costAt(input, output, cacheRead, cacheWrite float64) func(model.Usage) float64 {
	return func(u model.Usage) float64 {
		return (float64(u.Input)*input + float64(u.Output)*output +
			float64(u.CacheRead)*cacheRead + float64(u.CacheWrite)*cacheWrite) / 1e6
	}
}
