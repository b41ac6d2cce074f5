package netguard_test

import (
	"errors"
	"fmt"

	"github.com/reinhq/rein/netguard"
)

func ExampleCheckURL() {
	p := &netguard.Policy{Allow: []string{"127.0.0.1:8080"}}
	for _, raw := range []string{
		"https://example.com/docs",
		"http://0x7f.1/",          // 127.0.0.1, hex and short
		"http://0x7f.1:8080/page", // the same address, on the allowed port
		"http://metadata.google.internal/",
		"file:///etc/passwd",
	} {
		u, err := netguard.CheckURL(raw, p)
		if errors.Is(err, netguard.ErrBlocked) {
			fmt.Println("refused:", err)
			continue
		}
		fmt.Println("allowed:", u)
	}
	// Output:
	// allowed: https://example.com/docs
	// refused: the host 127.0.0.1 is a loopback address
	// allowed: http://127.0.0.1:8080/page
	// refused: the host metadata.google.internal is a local, internal or metadata name (.internal)
	// refused: the scheme file: is not allowed, only http and https
}
