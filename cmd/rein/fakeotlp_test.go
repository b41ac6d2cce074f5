package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// startFakeOTLP starts a local OTLP/HTTP traces receiver for a script: it
// decodes each export's protobuf body and appends one line per span to
// $WORK/otlp-spans.txt: the span's name, then its attributes as key=value.
// OTLP_FAKE_URL is its traces URL.
func startFakeOTLP(e *testscript.Env) {
	out := filepath.Join(e.WorkDir, "otlp-spans.txt")
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &req)
		}
		if err != nil || r.URL.Path != "/v1/traces" {
			http.Error(w, "want an OTLP protobuf export at /v1/traces", http.StatusBadRequest)
			return
		}
		var lines strings.Builder
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					lines.WriteString(s.Name)
					for _, kv := range s.Attributes {
						lines.WriteString(" " + kv.Key + "=" + strings.ReplaceAll(kv.GetValue().String(), "\n", " "))
					}
					lines.WriteString("\n")
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer f.Close()
		_, _ = f.WriteString(lines.String())
		resp, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	}))
	e.Defer(srv.Close)
	e.Setenv("OTLP_FAKE_URL", srv.URL+"/v1/traces")
}
