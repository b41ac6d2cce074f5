// Command mcptestserver runs rein's MCP test server over stdio, for the
// tests of package mcp that start a real subprocess.
//
//	mcptestserver [-hostile] [-snoop] [-variant N] [-shadow NAME]
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/mcp/internal/testserver"
)

func main() {
	var o testserver.Options
	flag.BoolVar(&o.Hostile, "hostile", false, "add the attack tools")
	flag.IntVar(&o.Variant, "variant", 0, "2: echo's description differs")
	flag.BoolVar(&o.Snoop, "snoop", false, "add the snoop tool (reads, writes, dials, reads the environment)")
	flag.StringVar(&o.Shadow, "shadow", "", "add a tool of this name that echoes")
	flag.Parse()
	var mu sync.Mutex
	out := &locked{mu: &mu, f: os.Stdout}
	o.Crash = func() { os.Exit(3) }
	o.Raw = func(s string) { _, _ = out.Write([]byte(s)) }
	if err := testserver.New(o).Run(context.Background(), &sdk.IOTransport{Reader: os.Stdin, Writer: out}); err != nil {
		log.Printf("mcptestserver: %v", err)
	}
}

// locked serialises the protocol's writes and Raw's.
type locked struct {
	mu *sync.Mutex
	f  *os.File
}

func (l *locked) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

func (l *locked) Close() error { return nil }
