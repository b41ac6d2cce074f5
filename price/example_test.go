package price_test

import (
	"fmt"

	"github.com/reinhq/rein/price"
)

// A dated snapshot is priced as its family; a local model has no price.
func Example() {
	table := price.Defaults()
	for _, m := range []string{"anthropic:claude-sonnet-4-5-20250929", "openai:llama3.1"} {
		p, ok := table.Lookup(m)
		if !ok {
			fmt.Printf("%s: no price, cost not tracked\n", m)
			continue
		}
		c := price.Of(p, price.Usage{Input: 12, Output: 3, CacheWrite: 12})
		fmt.Printf("%s: $%.6f\n", m, c.Total)
	}
	// Output:
	// anthropic:claude-sonnet-4-5-20250929: $0.000126
	// openai:llama3.1: no price, cost not tracked
}
