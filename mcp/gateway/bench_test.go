package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/mcp"
	"github.com/reinhq/rein/mcp/gateway"
	"github.com/reinhq/rein/mcp/internal/testserver"
)

// p50 is the median of d.
func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkGatewayCall: one echo call by a host through the gateway
// (gates, audit log in flush mode, upstream over a stdio-style pipe)
// against the same call by a go-sdk client straight to the same server,
// alternated in one run. Reports each p50 and their ratio.
func BenchmarkGatewayCall(b *testing.B) {
	ctx := b.Context()
	// Direct: a go-sdk client to the server.
	tr, _ := testserver.Pipe(ctx, testserver.Options{})
	direct, err := sdk.NewClient(&sdk.Implementation{Name: "direct"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	// Through the gateway.
	g, err := gateway.New(gateway.Options{
		MCP: config.MCP{Servers: map[string]config.MCPServer{"good": {Command: "in-process",
			Tools: map[string]config.MCPTool{"echo": {Effect: "read-only"}}}}},
		Connect: mcp.Options{PinFile: filepath.Join(b.TempDir(), "pins.json"), NewTransport: func(string) sdk.Transport {
			tr, _ := testserver.Pipe(ctx, testserver.Options{})
			return tr
		}},
		Guard: guarded.Options{WorkDir: b.TempDir(), AuditDir: filepath.Join(b.TempDir(), "audit"), Durability: audit.Flush},
	})
	if err != nil {
		b.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- g.Serve(sctx, st) }()
	host, err := sdk.NewClient(&sdk.Implementation{Name: "host"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { host.Close(); cancel(); <-done; g.Wait() }()
	call := func(cs *sdk.ClientSession, name string, i int) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{"text": fmt.Sprint("n", i)}})
		took := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", name, err, res)
		}
		return took
	}
	var d, gw []time.Duration
	b.ResetTimer()
	for i := range b.N {
		d = append(d, call(direct, "echo", i))
		gw = append(gw, call(host, "good__echo", i))
	}
	b.StopTimer()
	pd, pg := p50(d), p50(gw)
	b.ReportMetric(float64(pd.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(pg.Microseconds()), "gateway-p50-µs")
	b.ReportMetric(float64(pg)/float64(pd), "ratio")
	b.ReportMetric(float64((pg - pd).Microseconds()), "added-p50-µs")
}

// BenchmarkConnectList100: connecting to a server with 100 tools and
// listing them, by rein (mcp.Connect: list, scan, compile each schema,
// check pins) against the go-sdk client alone, alternated in one run.
func BenchmarkConnectList100(b *testing.B) {
	ctx := b.Context()
	newServer := func() sdk.Transport {
		s := sdk.NewServer(&sdk.Implementation{Name: "many"}, nil)
		for i := range 100 {
			s.AddTool(&sdk.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: fmt.Sprintf("Does thing number %d with the text it is given.", i),
				InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"count":{"type":"integer","minimum":0}},"required":["text"]}`)},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return &sdk.CallToolResult{}, nil
				})
		}
		ct, st := sdk.NewInMemoryTransports()
		go func() { _ = s.Run(ctx, st) }()
		return ct
	}
	pins := filepath.Join(b.TempDir(), "pins.json")
	cfg := config.MCP{Servers: map[string]config.MCPServer{"many": {Command: "in-process"}}}
	var d, r []time.Duration
	b.ResetTimer()
	for range b.N {
		tr := newServer()
		start := time.Now()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "direct"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		d = append(d, time.Since(start))
		cs.Close()
		tr = newServer()
		start = time.Now()
		set, err := mcp.Connect(ctx, cfg, mcp.Options{PinFile: pins, Transports: map[string]sdk.Transport{"many": tr}})
		if err != nil {
			b.Fatal(err)
		}
		r = append(r, time.Since(start))
		if len(set.Tools()) != 100 || n != 100 {
			b.Fatalf("%d tools offered, %d listed", len(set.Tools()), n)
		}
		set.Close()
	}
	b.StopTimer()
	pd, pr := p50(d), p50(r)
	b.ReportMetric(float64(pd.Microseconds()), "sdk-p50-µs")
	b.ReportMetric(float64(pr.Microseconds()), "rein-p50-µs")
	b.ReportMetric(float64(pr)/float64(pd), "ratio")
}
