package mcp_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/mcp"
	"github.com/reinhq/rein/mcp/gateway"
)

// Real MCP servers, built from the Go module cache or proxy once per
// test binary: the go-sdk's example servers "everything" and "memory"
// (same module as rein's client, so no new dependency), and mcp-go's
// "everything" (another implementation; built in a throwaway module so
// rein's go.mod does not gain it). A server that cannot be built skips
// its tests with the reason, unless REIN_REQUIRE names "mcp-servers".
var realServers struct {
	once sync.Once
	dir  string
	errs map[string]error
}

const requireServers = "mcp-servers"

func realServer(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() && !testenv.Required(requireServers) {
		t.Skip("-short: real MCP servers are not built")
	}
	realServers.once.Do(buildRealServers)
	testenv.Need(t, requireServers, realServers.errs[name])
	return filepath.Join(realServers.dir, name)
}

// buildRealServers builds every server into one directory that lives as
// long as the test binary (go's build cache makes a second run quick).
func buildRealServers() {
	realServers.errs = map[string]error{}
	dir, err := os.MkdirTemp("", "rein-mcp-servers-")
	if err != nil {
		for _, n := range []string{"everything", "memory", "mcpgo-everything"} {
			realServers.errs[n] = err
		}
		return
	}
	realServers.dir = dir
	build := func(out, pkg, modDir string, env ...string) error {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, out), pkg)
		cmd.Dir = modDir
		cmd.Env = append(os.Environ(), env...)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v: %s", pkg, err, strings.TrimSpace(string(b)))
		}
		return nil
	}
	realServers.errs["everything"] = build("everything", "github.com/modelcontextprotocol/go-sdk/examples/server/everything", ".")
	realServers.errs["memory"] = build("memory", "github.com/modelcontextprotocol/go-sdk/examples/server/memory", ".")
	mod := filepath.Join(dir, "mcpgo")
	if err := os.MkdirAll(mod, 0o755); err == nil {
		err = os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module mcpgoprobe\n\ngo 1.26\n\nrequire github.com/mark3labs/mcp-go v1.2.1\n"), 0o644)
		if err == nil {
			err = build("mcpgo-everything", "github.com/mark3labs/mcp-go/examples/everything", mod, "GOFLAGS=-mod=mod")
		}
		realServers.errs["mcpgo-everything"] = err
	}
}

func realCfg(t *testing.T) config.MCP {
	t.Helper()
	servers := map[string]config.MCPServer{
		"sdk": {Command: realServer(t, "everything"), Tools: map[string]config.MCPTool{"greet": {Effect: "read-only"}}},
		"mem": {Command: realServer(t, "memory"), Tools: map[string]config.MCPTool{
			"read_graph": {Effect: "read-only"}, "create_entities": {Effect: "reversible"}}},
	}
	realServers.once.Do(buildRealServers)
	if realServers.errs["mcpgo-everything"] == nil {
		servers["mgo"] = config.MCPServer{Command: realServer(t, "mcpgo-everything"), Tools: map[string]config.MCPTool{
			"echo": {Effect: "read-only"}, "add": {Effect: "read-only"}}}
	}
	return config.MCP{Servers: servers}
}

// The real servers over stdio, each in rein's sandbox: list, call; a tool
// whose name a model cannot take (the go-sdk's "greet (structured)") is
// reported, not offered.
func TestRealServersStdio(t *testing.T) {
	t.Parallel()
	cfg := realCfg(t)
	sb, _ := newSandbox(t)
	set, err := mcp.Connect(t.Context(), cfg, mcp.Options{Builtin: builtin, PinFile: filepath.Join(t.TempDir(), "pins.json"), Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	for _, s := range set.Servers() {
		if !s.Sandboxed {
			t.Errorf("server %s runs unsandboxed", s.Name)
		}
	}
	if got, err := call(t, set, "sdk__greet", `{"name":"rein"}`); err != nil || got != "Hi rein" {
		t.Errorf("sdk__greet = %q, %v", got, err)
	}
	if _, err := call(t, set, "mem__create_entities", `{"entities":[{"name":"Ada","entityType":"person","observations":["wrote the first program"]}]}`); err != nil {
		t.Errorf("mem__create_entities: %v", err)
	}
	if got, err := call(t, set, "mem__read_graph", `{}`); err != nil || !strings.Contains(got, "Ada") {
		t.Errorf("mem__read_graph = %q, %v", got, err)
	}
	if r := report(t, set, "sdk__greet (structured)"); r.Available || !strings.Contains(r.Reason, "cannot be offered to a model") {
		t.Errorf("greet (structured): %+v", r)
	}
	if _, ok := cfg.Servers["mgo"]; ok {
		if got, err := call(t, set, "mgo__echo", `{"message":"from rein"}`); err != nil || !strings.Contains(got, "from rein") {
			t.Errorf("mgo__echo = %q, %v", got, err)
		}
		if got, err := call(t, set, "mgo__add", `{"a":2,"b":3}`); err != nil || !strings.Contains(got, "5") {
			t.Errorf("mgo__add = %q, %v", got, err)
		}
		// The schema gate judges a real server's schema: a string for a
		// number is refused before the call.
		if _, err := call(t, set, "mgo__add", `{"a":"two","b":3}`); err == nil {
			t.Error("mgo__add took a string for a number")
		}
	} else {
		t.Logf("mcp-go's everything not built: %v", realServers.errs["mcpgo-everything"])
	}
}

// The go-sdk's everything server over streamable HTTP.
func TestRealServerHTTP(t *testing.T) {
	t.Parallel()
	bin := realServer(t, "everything")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.CommandContext(t.Context(), bin, "-http", addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never listened on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cfg := config.MCP{Servers: map[string]config.MCPServer{"web": {URL: "http://" + addr, Tools: map[string]config.MCPTool{"greet": {Effect: "read-only"}}}}}
	set, err := mcp.Connect(t.Context(), cfg, mcp.Options{Builtin: builtin, PinFile: filepath.Join(t.TempDir(), "pins.json")})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if got, err := call(t, set, "web__greet", `{"name":"over http"}`); err != nil || got != "Hi over http" {
		t.Errorf("web__greet = %q, %v", got, err)
	}
}

// The gateway in front of the real servers, with the go-sdk client as
// the host: reads run, a write asks the host's human, the audit log
// has them.
func TestRealServersGateway(t *testing.T) {
	t.Parallel()
	cfg := realCfg(t)
	auditDir := filepath.Join(t.TempDir(), "audit")
	sb, _ := newSandbox(t)
	g, err := gateway.New(gateway.Options{MCP: cfg,
		Connect: mcp.Options{Builtin: builtin, PinFile: filepath.Join(t.TempDir(), "pins.json"), Sandbox: sb},
		Guard:   guarded.Options{WorkDir: t.TempDir(), AuditDir: auditDir}})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx, st) }()
	var asked []string
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "host"}, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		}}).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := func(name string, args map[string]any) string {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			t.Errorf("%s: error result %q", name, b.String())
		}
		return b.String()
	}
	if got := text("sdk__greet", map[string]any{"name": "host"}); got != "Hi host" {
		t.Errorf("sdk__greet = %q", got)
	}
	text("mem__create_entities", map[string]any{"entities": []any{map[string]any{"name": "Grace", "entityType": "person", "observations": []any{"COBOL"}}}})
	if got := text("mem__read_graph", map[string]any{}); !strings.Contains(got, "Grace") {
		t.Errorf("mem__read_graph = %q", got)
	}
	// mem__add_observations is unclassified: irreversible, so it asks, as
	// the reversible create_entities did in the default mode.
	text("mem__add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "Grace", "contents": []any{"admiral"}}}})
	if len(asked) != 2 || !strings.Contains(asked[0], "mem__create_entities") || !strings.Contains(asked[1], "confirm gate") {
		t.Errorf("the host was asked %q", asked)
	}
	cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	g.Wait()
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("%d audit logs, want 1", len(logs))
	}
	data, _ := os.ReadFile(logs[0])
	for _, want := range []string{`"tool":"sdk__greet"`, `"tool":"mem__add_observations"`, `"type":"stop"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the audit log lacks %s", want)
		}
	}
}
