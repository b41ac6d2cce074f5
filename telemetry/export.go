package telemetry

import (
	"context"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Config is where traces go ([telemetry] in config, --otlp-endpoint). The
// zero value exports nothing.
type Config struct {
	// Endpoint is the OTLP/HTTP traces URL, such as
	// http://localhost:4318/v1/traces. Empty: no traces.
	Endpoint string
	// Headers are sent with every export (an API key of the collector).
	Headers map[string]string
	// Content adds the redacted text the audit log holds to the spans.
	Content bool
	// Service is the resource's service.name; "" is "rein".
	Service string
}

// Exporter is a tracer provider that sends spans over OTLP/HTTP in batches.
type Exporter struct {
	*sdktrace.TracerProvider
	content bool
}

// Start makes the exporter c asks for, or nil when c.Endpoint is empty.
// Nothing is sent until a session ends a span; Shutdown sends what is left.
func Start(ctx context.Context, c Config) (*Exporter, error) {
	if c.Endpoint == "" {
		return nil, nil
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("telemetry: the OTLP endpoint %q is not an http(s) URL like http://localhost:4318/v1/traces", c.Endpoint)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(c.Endpoint)}
	if len(c.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(c.Headers))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter for %s: %w", c.Endpoint, err)
	}
	if c.Service == "" {
		c.Service = "rein"
	}
	res := resource.NewSchemaless(attribute.String("service.name", c.Service))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Exporter{TracerProvider: tp, content: c.Content}, nil
}

// Session returns a session's span maker on this exporter (nil on a nil
// Exporter: no traces).
func (e *Exporter) Session(ctx context.Context) *Session {
	if e == nil {
		return nil
	}
	return NewSession(ctx, Options{Provider: e.TracerProvider, Content: e.content})
}

// Shutdown sends the spans still queued and stops the exporter; a nil
// Exporter has nothing to do.
func (e *Exporter) Shutdown(ctx context.Context) error {
	if e == nil {
		return nil
	}
	if err := e.TracerProvider.Shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: sending the last spans: %w", err)
	}
	return nil
}
