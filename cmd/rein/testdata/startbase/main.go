// Command startbase is BenchmarkStartup's yardstick: a Go program that
// sends one Chat Completions request to the URL in its argument, as rein's
// first model request does, and nothing else.
package main

import (
	"net/http"
	"os"
	"strings"
)

func main() {
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"What is 2+3?"}]}`
	resp, err := http.Post(os.Args[1]+"chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		os.Exit(1)
	}
	resp.Body.Close()
}
