package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
	reinmodel "github.com/reinhq/rein/model"
	"github.com/reinhq/rein/secret"
)

// recording is a model that remembers every request it was sent.
type recording struct {
	reinmodel.Model
	mu   sync.Mutex
	reqs []string
}

func (r *recording) Generate(ctx context.Context, req *reinmodel.Request) (*reinmodel.Response, error) {
	b, _ := json.Marshal(req)
	r.mu.Lock()
	r.reqs = append(r.reqs, string(b))
	r.mu.Unlock()
	return r.Model.Generate(ctx, req)
}

// A secret planted in the environment, in a file the agent reads, in a
// command's output and in a web page reaches no model request and no audit
// record; what the model is shown says [REDACTED:NAME] instead.
func TestSecretsStayOutOfSight(t *testing.T) {
	const value = "zq-7f3a9c1e-planted-secret-4b2d"
	env := []string{"PATH=/usr/bin:/bin", "SERVICE_API_KEY=" + value}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><p>token: %s</p></body></html>", value)
	}))
	defer page.Close()
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "config.env"), []byte("SERVICE_API_KEY="+value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`{"turns":[
	 {"text":"read","calls":[{"tool":"read_file","args":{"path":"config.env"}}]},
	 {"text":"run","calls":[{"tool":"run_bash","args":{"command":"cat config.env; echo also-$SERVICE_API_KEY-end"}}]},
	 {"text":"fetch","calls":[{"tool":"webfetch","args":{"url":%q}}]},
	 {"text":"done"}]}`, page.URL)
	m := &recording{Model: model(t, script)}
	auditDir := t.TempDir()
	out, err := harness.Run(t.Context(), harness.Spec{
		Task: "Check the service key " + value + " works.", Model: m, WorkDir: work, NoRollback: true,
		Policy:   harness.Policy{Allowed: []string{"read_file", "run_bash", "webfetch"}, Mode: permission.Bypass},
		NetAllow: []string{strings.TrimPrefix(page.URL, "http://")},
		Sandbox:  harness.Sandbox{Backend: harness.SandboxNone},
		Redact:   secret.NewRedactor(env).Redact, AuditDir: auditDir,
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != "done" || out.ToolCalls != 3 {
		t.Fatalf("stop %s after %d calls (%v)", out.Stop, out.ToolCalls, out.Err)
	}
	log, err := os.ReadFile(out.Audit)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(m.reqs, "\n")
	for what, text := range map[string]string{"a model request": all, "the audit log": string(log)} {
		if strings.Contains(text, value) {
			t.Errorf("the secret reached %s", what)
		}
	}
	// The file, the page and the task were seen, redacted; the command's
	// environment never had the variable at all.
	for _, want := range []string{"SERVICE_API_KEY=[REDACTED:SERVICE_API_KEY]", "token: [REDACTED:SERVICE_API_KEY]", "also--end", "Check the service key [REDACTED:SERVICE_API_KEY] works."} {
		if !strings.Contains(all, want) {
			t.Errorf("the model never saw %q", want)
		}
	}
}
