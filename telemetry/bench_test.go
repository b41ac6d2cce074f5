package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/telemetry"
)

// BenchmarkSessionTracing runs the scripted session (4 steps, 3 calls)
// with tracing off, on, and on with content, spans batched to an exporter
// that drops them: the cost of tracing per step, as a ratio to off.
//
//	go test ./telemetry -run '^$' -bench SessionTracing -benchtime 200x -count 3
func BenchmarkSessionTracing(b *testing.B) {
	for _, c := range []struct {
		name    string
		on      bool
		content bool
	}{{"off", false, false}, {"on", true, false}, {"on+content", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			tp := trace.NewTracerProvider(trace.WithBatcher(tracetest.NewNoopExporter()))
			defer func() { _ = tp.Shutdown(context.Background()) }()
			steps := 0
			b.ReportAllocs()
			for b.Loop() {
				var observe func(audit.Record)
				if c.on {
					observe = telemetry.NewSession(context.Background(), telemetry.Options{Provider: tp, Content: c.content}).Observe
				}
				steps += run(b, observe).Steps
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
		})
	}
}

// BenchmarkObserve feeds one session's audit records (read back from its
// log) to a span maker: what tracing adds to each step, without the
// session around it.
//
//	go test ./telemetry -run '^$' -bench Observe
func BenchmarkObserve(b *testing.B) {
	res := run(b, nil)
	recs := readLog(b, res.Audit)
	for _, content := range []bool{false, true} {
		name := "on"
		if content {
			name = "on+content"
		}
		b.Run(name, func(b *testing.B) {
			tp := trace.NewTracerProvider(trace.WithBatcher(tracetest.NewNoopExporter()))
			defer func() { _ = tp.Shutdown(context.Background()) }()
			b.ReportAllocs()
			for b.Loop() {
				s := telemetry.NewSession(context.Background(), telemetry.Options{Provider: tp, Content: content})
				for _, r := range recs {
					s.Observe(r)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*res.Steps), "ns/step")
		})
	}
}

func readLog(b *testing.B, path string) []audit.Record {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var out []audit.Record
	for line := range bytes.Lines(data) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		if audit.Padding(line) {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal(line, &r); err != nil {
			b.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}
