package mcp_test

import (
	"encoding/json"
	"errors"
	"net"
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
		sb, _ := newSandbox(t)
		cfg := config.MCP{Servers: map[string]config.MCPServer{
			"good": {Command: bin, Tools: map[string]config.MCPTool{"echo": {Effect: "read-only"}}},
			"evil": {Command: bin, Args: []string{"-hostile"}, PassEnv: []string{"REIN_TEST_TOKEN"}, Timeout: config.Duration(time.Minute)},
		}}
		set, err := mcp.Connect(t.Context(), cfg, mcp.Options{Builtin: builtin, PinFile: pins, Environ: environ, Sandbox: sb})
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

// A stdio server runs in rein's sandbox: a server that reads the user's
// credentials, a file outside, a secret of rein's environment, writes
// outside its own directory or dials a host port gets nothing, while what
// it may do (read the work dir, write its own directory, see a variable
// pass_env names) works. The same server configured unsandboxed reaches
// the files and the port the sandbox kept from it: the control that shows
// the attacks are real.
func TestStdioServerSandboxed(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	home := t.TempDir() // the user's home as the server would find it
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(ssh, "id_ed25519")
	outside := filepath.Join(t.TempDir(), "credentials.json")
	for f, content := range map[string]string{key: "PRIVATE KEY", outside: "aws_secret=AKIA-TEST"} {
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	environ := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "ANTHROPIC_API_KEY=sk-ant-rein-test", "REIN_TEST_TOKEN=s3cret"}
	connect := func(t *testing.T, unsandboxed bool) (*mcp.Set, string) {
		sb, work := newSandbox(t)
		if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("project notes"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := config.MCP{Servers: map[string]config.MCPServer{"snoop": {Command: bin, Args: []string{"-snoop"},
			PassEnv: []string{"REIN_TEST_TOKEN"}, Unsandboxed: unsandboxed,
			Tools: map[string]config.MCPTool{"snoop": {Effect: "read-only"}}}}}
		set, err := mcp.Connect(t.Context(), cfg, mcp.Options{Builtin: builtin, PinFile: filepath.Join(t.TempDir(), "pins.json"), Environ: environ, Sandbox: sb})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { set.Close() })
		if got := set.Servers()[0].Sandboxed; got == unsandboxed {
			t.Errorf("Sandboxed = %v with unsandboxed = %v", got, unsandboxed)
		}
		return set, work
	}
	set, work := connect(t, false)
	control, cwork := connect(t, true)
	for _, tt := range []struct {
		name, op, arg string
		// want is what the sandboxed server gets (a prefix); leak, when
		// set, is what the unsandboxed control gets and the sandboxed one
		// must not.
		want, leak string
	}{
		{"reads ~/.ssh", "read", key, "refused", "PRIVATE KEY"},
		{"reads a credential file outside", "read", outside, "refused", "AKIA-TEST"},
		{"sees rein's API key", "env", "ANTHROPIC_API_KEY", "got: ", "sk-ant-rein-test"},
		{"writes outside its dir", "write", filepath.Join(filepath.Dir(outside), "planted"), "refused", ""},
		{"writes the work dir", "write", "{work}/planted", "refused", ""},
		{"dials a host port", "dial", ln.Addr().String(), "refused", ""},
		{"reads the work dir", "read", "{work}/notes.txt", "got: project notes", ""},
		{"writes its own dir", "write", "{home}/state.json", "got: ", ""},
		{"sees pass_env", "env", "REIN_TEST_TOKEN", "got: s3cret", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			arg := func(work string) string { return strings.ReplaceAll(tt.arg, "{work}", work) }
			a := arg(work)
			if tt.arg == "{home}/state.json" { // its own dir, which it learns from HOME
				h, err := call(t, set, "snoop__snoop", `{"op":"env","arg":"HOME"}`)
				if err != nil {
					t.Fatal(err)
				}
				a = strings.TrimPrefix(h, "got: ") + "/state.json"
			}
			args, _ := json.Marshal(map[string]string{"op": tt.op, "arg": a})
			got, err := call(t, set, "snoop__snoop", string(args))
			if err != nil {
				t.Fatalf("snoop: %v", err)
			}
			if !strings.HasPrefix(got, tt.want) || (tt.leak != "" && strings.Contains(got, tt.leak)) {
				t.Errorf("sandboxed %s %s = %q, want %q…", tt.op, a, got, tt.want)
			}
			// rein's environment is kept from every stdio server, sandboxed
			// or not (sandbox.ChildEnv): no control for it.
			if (tt.leak != "" || tt.want == "refused") && tt.op != "env" {
				cargs, _ := json.Marshal(map[string]string{"op": tt.op, "arg": arg(cwork)})
				cgot, err := call(t, control, "snoop__snoop", string(cargs))
				if err != nil {
					t.Fatalf("control snoop: %v", err)
				}
				if strings.HasPrefix(cgot, "refused") || (tt.leak != "" && !strings.Contains(cgot, tt.leak)) {
					t.Errorf("the unsandboxed control %s %s = %q: the attack is not real", tt.op, tt.arg, cgot)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(work, "planted")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the sandboxed server planted a file in the work dir: %v", err)
	}
}

// Without a sandbox to hold it, a stdio server does not start unless the
// user's config says it may run unsandboxed (or the user chose no sandbox).
func TestStdioServerNeedsSandbox(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	why := errors.New("Landlock is not enabled in this kernel")
	for _, tt := range []struct {
		name string
		sc   config.MCPServer
		opts mcp.Options
		want string // "" : starts, unsandboxed
	}{
		{"no sandbox", config.MCPServer{Command: bin}, mcp.Options{WhyNoSandbox: why}, "there is none here (Landlock is not enabled in this kernel)"},
		{"configured unsandboxed", config.MCPServer{Command: bin, Unsandboxed: true}, mcp.Options{WhyNoSandbox: why}, ""},
		{"the user chose no sandbox", config.MCPServer{Command: bin}, mcp.Options{NoSandbox: true}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opts.PinFile = filepath.Join(t.TempDir(), "pins.json")
			set, err := mcp.Connect(t.Context(), config.MCP{Servers: map[string]config.MCPServer{"srv": tt.sc}}, tt.opts)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "unsandboxed = true") {
					t.Errorf("Connect = %v, want an error with %q and the fix", err, tt.want)
				}
				if set != nil {
					set.Close()
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer set.Close()
			if s := set.Servers()[0]; s.Sandboxed {
				t.Errorf("%+v: reported sandboxed", s)
			}
			if got, err := call(t, set, "srv__echo", `{"text":"x"}`); err != nil || got != "echo: x" {
				t.Errorf("echo = %q, %v", got, err)
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
