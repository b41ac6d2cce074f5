package telemetry_test

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/reinhq/rein/telemetry"
)

// receiver is a local OTLP/HTTP traces endpoint: it decodes each request's
// protobuf body and keeps the spans' names and the request's headers.
type receiver struct {
	mu      sync.Mutex
	names   []string
	service string
	auth    string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf POST to /v1/traces", http.StatusBadRequest)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = z
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.auth = r.Header.Get("Authorization")
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				rc.service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				rc.names = append(rc.names, s.Name)
			}
		}
	}
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// TestExportOverOTLPHTTP: with an endpoint configured, a session's spans
// reach a local OTLP/HTTP receiver as protobuf, with the configured
// headers; Shutdown sends what is queued.
func TestExportOverOTLPHTTP(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	exp, err := telemetry.Start(t.Context(), telemetry.Config{Endpoint: srv.URL + "/v1/traces", Headers: map[string]string{"Authorization": "Bearer collector-key"}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, exp.Session(context.Background()).Observe)
	if err := exp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	count := map[string]int{}
	for _, n := range rc.names {
		count[n]++
	}
	if count["invoke_agent rein"] != 1 || count["chat claude-test"] != 4 || count["execute_tool deploy"] != 1 || len(rc.names) != 8 {
		t.Errorf("the receiver got spans %v", rc.names)
	}
	if rc.service != "rein" || rc.auth != "Bearer collector-key" {
		t.Errorf("service.name %q, Authorization %q", rc.service, rc.auth)
	}
}

// TestStartOffAndBadEndpoints: no endpoint is no exporter (and its nil
// methods are safe); an endpoint that is not an http(s) URL is an error.
func TestStartOffAndBadEndpoints(t *testing.T) {
	exp, err := telemetry.Start(t.Context(), telemetry.Config{})
	if err != nil || exp != nil {
		t.Fatalf("no endpoint: %v, %v", exp, err)
	}
	if exp.Session(t.Context()) != nil || exp.Shutdown(t.Context()) != nil {
		t.Error("a nil exporter makes sessions or fails to shut down")
	}
	for _, bad := range []string{"localhost:4318", "grpc://collector:4317", "http://", "::"} {
		if _, err := telemetry.Start(t.Context(), telemetry.Config{Endpoint: bad}); err == nil {
			t.Errorf("endpoint %q accepted", bad)
		}
	}
}
