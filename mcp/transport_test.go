package mcp_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/mcp"
	"github.com/reinhq/rein/mcp/internal/testserver"
)

// buildServer builds rein's test server as a real program.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcptestserver")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./internal/testserver/mcptestserver")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The same server as a stdio subprocess: legitimate calls work; a crash,
// a malformed message and a huge result end its connection with a clear
// error and the others go on; Close stops the process.
func TestStdioSubprocess(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	pins := filepath.Join(t.TempDir(), "pins.json")
	environ := append(os.Environ(), "REIN_TEST_TOKEN=s3cret")
	connect := func(t *testing.T) *mcp.Set {
		cfg := config.MCP{Servers: map[string]config.MCPServer{
			"good": {Command: bin, Tools: map[string]config.MCPTool{"echo": {Effect: "read-only"}}},
			"evil": {Command: bin, Args: []string{"-hostile"}, PassEnv: []string{"REIN_TEST_TOKEN"}, Timeout: config.Duration(time.Minute)},
		}}
		set, err := mcp.Connect(t.Context(), cfg, mcp.Options{Builtin: builtin, PinFile: pins, Environ: environ})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { set.Close() })
		return set
	}
	t.Run("echo", func(t *testing.T) {
		set := connect(t)
		if got, err := call(t, set, "good__echo", `{"text":"over stdio"}`); err != nil || got != "echo: over stdio" {
			t.Errorf("echo = %q, %v", got, err)
		}
		if r := report(t, set, "evil__poisoned"); r.Available {
			t.Errorf("poisoned over stdio: %+v", r)
		}
		if n := running(t, bin); n != 2 {
			t.Errorf("%d server processes run, want 2", n)
		}
		set.Close()
		if n := running(t, bin); n != 0 {
			t.Errorf("%d server processes outlive Close", n)
		}
	})
	for _, fault := range []string{"crash", "malformed", "huge"} {
		t.Run(fault, func(t *testing.T) {
			set := connect(t)
			_, err := call(t, set, "evil__"+fault, `{}`)
			if !errors.Is(err, mcp.ErrServerGone) {
				t.Errorf("%s = %v, want ErrServerGone", fault, err)
			}
			if fault == "crash" && !strings.Contains(err.Error(), "exit status 3") {
				t.Errorf("crash = %v, want the exit status", err)
			}
			if _, err := call(t, set, "evil__inject", `{}`); !errors.Is(err, mcp.ErrServerGone) {
				t.Errorf("a call after %s = %v, want ErrServerGone", fault, err)
			}
			if got, err := call(t, set, "good__echo", `{"text":"on"}`); err != nil || got != "echo: on" {
				t.Errorf("the other server after %s: %q, %v", fault, got, err)
			}
		})
	}
}

// running counts the processes running bin (Linux's /proc).
func running(t *testing.T, bin string) int {
	t.Helper()
	exes, err := filepath.Glob("/proc/[0-9]*/exe")
	if err != nil || len(exes) == 0 {
		t.Skip("no /proc here")
	}
	n := 0
	for _, e := range exes {
		if target, err := os.Readlink(e); err == nil && target == bin {
			n++
		}
	}
	return n
}

// A streamable HTTP server gets the configured headers, their values
// from the environment, and its tools work.
func TestStreamableHTTP(t *testing.T) {
	t.Parallel()
	var bad atomic.Int32
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testserver.New(testserver.Options{}) }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			bad.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cfg := config.MCP{Servers: map[string]config.MCPServer{"web": {URL: srv.URL + "/mcp", Headers: map[string]string{"Authorization": "WEB_AUTH"},
		Tools: map[string]config.MCPTool{"echo": {Effect: "read-only"}}}}}
	pins := filepath.Join(t.TempDir(), "pins.json")
	set, err := mcp.Connect(t.Context(), cfg, mcp.Options{PinFile: pins, Environ: []string{"WEB_AUTH=Bearer s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if got, err := call(t, set, "web__echo", `{"text":"over http"}`); err != nil || got != "echo: over http" {
		t.Errorf("echo = %q, %v", got, err)
	}
	if n := bad.Load(); n != 0 {
		t.Errorf("%d requests without the header", n)
	}
	// Without the secret, the server refuses rein and the session does not start.
	if _, err := mcp.Connect(t.Context(), cfg, mcp.Options{PinFile: pins, Environ: []string{"WEB_AUTH=Bearer wrong"}}); err == nil ||
		!strings.Contains(err.Error(), `MCP server "web" cannot start`) {
		t.Errorf("with a wrong token: %v", err)
	}
}
