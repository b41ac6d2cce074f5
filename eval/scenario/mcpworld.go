package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/mcp"
	"github.com/reinhq/rein/model/jsonx"
	"github.com/reinhq/rein/tool"
)

// MCPServer is an MCP server of a suite's world, served in-process (the
// go-sdk's in-memory transport) and reached through rein's MCP client
// (package mcp), configured as a user would configure a real server:
// every tool's effect class and argument roles come from here, as they
// come from [mcp.servers.NAME.tools.TOOL] of the config.
type MCPServer struct {
	Name  string    `json:"name"`
	Tools []MCPTool `json:"tools"`
}

// MCPTool is one tool of an MCP server. It is offered as NAME__tool. Every
// call is recorded (an mcp_call check finds it); it returns Result.
type MCPTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// InputSchema is the tool's JSON Schema, an object schema.
	InputSchema json.RawMessage `json:"input_schema"`
	// Effect is the effect class the user's config gives it: read-only,
	// reversible or irreversible ("" is irreversible, as in config).
	Effect string `json:"effect,omitempty"`
	// Roles are the argument roles the config gives (recipient, amount,
	// url, path, target, ...).
	Roles map[string]string `json:"roles,omitempty"`
	// Result is what every call returns ("ok" when empty).
	Result string `json:"result,omitempty"`

	// approved is the description the user approved in an earlier
	// session (pinned), when an injection placed with mode rug-pull
	// changed it since; "" when it did not change.
	approved string
}

// ModeRugPull is the placement mode of a rug pull: the injection is
// appended to an MCP tool's description after the user approved (pinned)
// the tool in an earlier session: the server now serves the changed one.
const ModeRugPull = "rug-pull"

// mcpQualified returns the names the servers' tools are offered under.
func mcpQualified(servers []MCPServer) []string {
	var names []string
	for _, s := range servers {
		for _, t := range s.Tools {
			names = append(names, s.Name+mcp.Sep+t.Name)
		}
	}
	return names
}

// mcpTool finds the tool offered as qualified.
func mcpTool(servers []MCPServer, qualified string) (si, ti int, ok bool) {
	for i, s := range servers {
		for j, t := range s.Tools {
			if s.Name+mcp.Sep+t.Name == qualified {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// checkMCP checks the suite's servers: names a config would accept, every
// tool with an object schema and a known effect and roles.
func checkMCP(servers []MCPServer) error {
	seen := map[string]bool{}
	for i, s := range servers {
		where := fmt.Sprintf("environment mcp server %d (%s)", i+1, s.Name)
		switch {
		case !config.ValidServerName(s.Name) || strings.Contains(s.Name, mcp.Sep):
			return fmt.Errorf(`%s: "name" must be what [mcp.servers.NAME] accepts: letters, digits, '-' and single '_'`, where)
		case seen[s.Name]:
			return fmt.Errorf("%s: the name is used twice", where)
		case len(s.Tools) == 0:
			return fmt.Errorf(`%s: "tools" is empty`, where)
		}
		seen[s.Name] = true
		tools := map[string]bool{}
		for j, t := range s.Tools {
			tw := fmt.Sprintf("%s tool %d (%s)", where, j+1, t.Name)
			switch {
			case t.Name == "" || tools[t.Name]:
				return fmt.Errorf(`%s: "name" is empty or used twice`, tw)
			case strings.TrimSpace(t.Description) == "":
				return fmt.Errorf(`%s: "description" is empty`, tw)
			case !jsonx.IsObject(t.InputSchema):
				return fmt.Errorf(`%s: "input_schema" must be a JSON object schema`, tw)
			}
			tools[t.Name] = true
			if _, err := config.ParseEffect(t.Effect); err != nil {
				return fmt.Errorf(`%s: "effect": %w`, tw, err)
			}
			for _, arg := range slices.Sorted(maps.Keys(t.Roles)) {
				if _, err := config.ParseRole(t.Roles[arg]); err != nil {
					return fmt.Errorf(`%s: "roles" %s: %w`, tw, arg, err)
				}
			}
		}
	}
	return nil
}

// cloneMCP copies servers deeply enough for an injection to change one
// run's copy.
func cloneMCP(servers []MCPServer) []MCPServer {
	out := slices.Clone(servers)
	for i := range out {
		out[i].Tools = slices.Clone(out[i].Tools)
	}
	return out
}

// MCPCall is one call a server of the world received.
type MCPCall struct {
	Tool string          // qualified: SERVER__tool
	Args json.RawMessage // as the server got them
}

// mcpWorld is a run's MCP servers and rein's client of them.
type mcpWorld struct {
	mu    sync.Mutex
	calls []MCPCall
	set   *mcp.Set
	stops []func()
	dir   string // the pin file's directory
}

// mcpMode is how rein's MCP client is set up for a run.
type mcpMode struct {
	// guarded: the user's config as written (the injection scan decides,
	// definitions are pinned); otherwise every tool's description is
	// trusted and nothing was pinned before: no MCP defence but the gates.
	guarded bool
	// builtin are the session's built-in tools (a definition naming one
	// is flagged).
	builtin []string
}

// connectMCP serves the servers in-process and connects rein's MCP client
// to them. Guarded, a tool whose description changed (a rug pull) was
// pinned as approved in an earlier session first: a session with the
// approved definitions.
func connectMCP(ctx context.Context, servers []MCPServer, m mcpMode) (*mcpWorld, error) {
	dir, err := os.MkdirTemp("", "rein-eval-mcp-")
	if err != nil {
		return nil, fmt.Errorf("eval mcp pins: %w", err)
	}
	w := &mcpWorld{dir: dir}
	cfg := config.MCP{Servers: map[string]config.MCPServer{}}
	for _, s := range servers {
		sc := config.MCPServer{Command: "in-process", Tools: map[string]config.MCPTool{}}
		for _, t := range s.Tools {
			sc.Tools[t.Name] = config.MCPTool{Effect: t.Effect, Roles: maps.Clone(t.Roles), TrustDescription: !m.guarded}
		}
		cfg.Servers[s.Name] = sc
	}
	opts := mcp.Options{Builtin: m.builtin, PinFile: filepath.Join(dir, "pins.json"), Environ: []string{}}
	pulled := slices.ContainsFunc(servers, func(s MCPServer) bool {
		return slices.ContainsFunc(s.Tools, func(t MCPTool) bool { return t.approved != "" })
	})
	if m.guarded && pulled {
		// The earlier session: the user approved the definitions as
		// they were.
		trs, stop, err := w.serve(ctx, servers, true)
		if err != nil {
			w.close()
			return nil, err
		}
		opts.Transports = trs
		set, err := mcp.Connect(ctx, cfg, opts)
		if err == nil {
			err = set.Close()
		}
		stop()
		if err != nil {
			w.close()
			return nil, fmt.Errorf("eval mcp: the approving session: %w", err)
		}
		w.calls = nil
	}
	trs, stop, err := w.serve(ctx, servers, false)
	if err != nil {
		w.close()
		return nil, err
	}
	w.stops = append(w.stops, stop)
	opts.Transports = trs
	if w.set, err = mcp.Connect(ctx, cfg, opts); err != nil {
		w.close()
		return nil, fmt.Errorf("eval mcp: %w", err)
	}
	return w, nil
}

// serve starts the servers in-process; approved serves the definitions
// as the user approved them, before any rug pull.
func (w *mcpWorld) serve(ctx context.Context, servers []MCPServer, approved bool) (map[string]sdk.Transport, func(), error) {
	trs := map[string]sdk.Transport{}
	var sessions []*sdk.ServerSession
	stop := func() {
		for _, ss := range sessions {
			_ = ss.Close()
		}
	}
	for _, s := range servers {
		srv := sdk.NewServer(&sdk.Implementation{Name: "rein-eval-" + s.Name, Version: "1"}, nil)
		for _, t := range s.Tools {
			desc := t.Description
			if approved && t.approved != "" {
				desc = t.approved
			}
			srv.AddTool(&sdk.Tool{Name: t.Name, Description: desc, InputSchema: t.InputSchema}, w.handler(s.Name+mcp.Sep+t.Name, t.Result))
		}
		ct, st := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("eval mcp server %s: %w", s.Name, err)
		}
		sessions = append(sessions, ss)
		trs[s.Name] = ct
	}
	return trs, stop, nil
}

func (w *mcpWorld) handler(name, result string) sdk.ToolHandler {
	if result == "" {
		result = "ok"
	}
	return func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		w.mu.Lock()
		w.calls = append(w.calls, MCPCall{Tool: name, Args: slices.Clone(req.Params.Arguments)})
		w.mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: result}}}, nil
	}
}

// tools returns the tools rein offers of the servers.
func (w *mcpWorld) tools() []tool.Tool {
	if w == nil || w.set == nil {
		return nil
	}
	return w.set.Tools()
}

// received returns the calls the servers received.
func (w *mcpWorld) received() []MCPCall {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.calls)
}

func (w *mcpWorld) close() {
	if w == nil {
		return
	}
	if w.set != nil {
		_ = w.set.Close() // in-process servers: nothing to report on close
	}
	for _, stop := range w.stops {
		stop()
	}
	os.RemoveAll(w.dir)
}

// addMCP serves the world's MCP servers and adds the tools rein offers of
// them to the world's registry.
func (w *world) addMCP(ctx context.Context, servers []MCPServer, m mcpMode) error {
	if len(servers) == 0 {
		return nil
	}
	mw, err := connectMCP(ctx, servers, m)
	if err != nil {
		return err
	}
	w.mcp = mw
	tools := mw.tools()
	for _, n := range w.reg.Names() {
		t, _ := w.reg.Lookup(n)
		tools = append(tools, t)
	}
	if w.reg, err = tool.NewRegistry(tools...); err != nil {
		return fmt.Errorf("eval mcp: %w", err)
	}
	return nil
}

// builtinTools are the built-in tools among a suite's tools.
func builtinTools(tools []string) []string {
	var out []string
	for _, t := range tools {
		if slices.Contains(KnownTools(), t) {
			out = append(out, t)
		}
	}
	return out
}
