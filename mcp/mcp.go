// Package mcp brings the tools of MCP (Model Context Protocol) servers into
// rein's loop, under rein's gates. Connect starts or reaches the servers of
// the [mcp.servers.NAME] config, lists their tools and makes each a
// tool.Tool named NAME__tool that the session's gates judge like a
// built-in one: by rein's effect class (from config; irreversible when
// unclassified; the server's annotations may only make it stricter) and by
// the argument roles the config gives.
//
// Everything a server says is untrusted. A tool's description is offered to
// the model as data, inside intake's external-document wrapper; its name,
// description and schema are scanned for injection markers (instructions
// addressed to the model, names of other tools, credential paths,
// invisible characters, rein's wrapper tags), and a tool with a finding is
// not offered unless the user's config trusts it. The canonical definition
// of every tool is pinned (SHA-256, in the user's state dir) on first
// sight; a definition that changes, at start or after the server says its
// list changed, makes the tool unavailable until the user approves the
// new one (Set.Approve, rein mcp pin). Results and errors go back through
// the loop like any tool's: capped, redacted, wrapped, recorded as
// untrusted. A server's questions to the user (elicitation) go to the
// session's approve.Asker with the server's name; sampling and roots are
// not offered.
//
// A stdio server runs in rein's sandbox (Options.Sandbox, a
// sandbox.Landlock: it reads the work dir, writes only a directory of its
// own, reaches the network only by the session's policy) with
// sandbox.ChildEnv's environment plus what its config passes; it runs with
// the user's rights only when its config says unsandboxed or the session
// has no sandbox by the user's choice (Options.NoSandbox).
//
// What it will not do: see what a server does with a call. A server may
// behave differently from what its definition says without changing it;
// the sandbox bounds what it can reach, and the effect class and the
// human's yes are the guard against the rest.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/tool"
)

// Sep separates a server's name from its tool's in the name rein offers.
const Sep = "__"

// Errors a tool call can fail with, for callers that branch on them.
var (
	// ErrChanged: the tool's definition changed while the session ran.
	ErrChanged = errors.New("the tool's definition changed since it was pinned")
	// ErrServerGone: the server's connection is closed (it crashed, exited
	// or sent what rein could not read).
	ErrServerGone = errors.New("the MCP server's connection is closed")
	// ErrTimeout: the server did not answer a call in time.
	ErrTimeout = errors.New("the MCP server did not answer in time")
	// ErrToolFailed: the server answered with an error result.
	ErrToolFailed = errors.New("the MCP tool reported an error")
)

// Options configure Connect.
type Options struct {
	// Builtin names the session's built-in tools: an MCP tool may not
	// take one's name, and a definition that mentions one is flagged.
	Builtin []string
	// PinFile is where definitions are pinned; "" is DefaultPinFile().
	// Tests use a file under t.TempDir().
	PinFile string
	// ReadOnlyPins pins nothing new (rein mcp list only looks).
	ReadOnlyPins bool
	// Asker puts a server's elicitation requests to the human; nil
	// declines them all.
	Asker approve.Asker
	// Environ is rein's environment, from which pass_env and headers take
	// their values; nil is os.Environ().
	Environ []string
	// Transports, when it has an entry for a server, connects to it over
	// that transport instead of its command or URL (tests, embedders).
	Transports map[string]sdk.Transport
	// NewTransport, when set and it returns a transport for a server, is
	// called at each Connect for a fresh one (a gateway connects anew for
	// every host session); it comes after Transports.
	NewTransport func(server string) sdk.Transport
	// Sandbox starts the stdio servers confined (the session's sandbox
	// backend; cmd/rein gives a *sandbox.Landlock whose WorkDir is the
	// session's and whose network policy is the session's). A server whose
	// config says unsandboxed = true runs outside it, with the user's
	// rights.
	Sandbox Sandbox
	// NoSandbox runs every stdio server with the user's rights: the user
	// chose to run the session without a sandbox (--sandbox none).
	NoSandbox bool
	// WhyNoSandbox says why Sandbox is nil when the user did not choose
	// NoSandbox (the backend does not work here): a stdio server that is
	// not configured unsandboxed then cannot start, and the error says why.
	WhyNoSandbox error
	// MaxMessageBytes caps one message read from a stdio server; a bigger
	// one closes the connection (default 8 MiB).
	MaxMessageBytes int
	// MaxResultBytes caps the text of one result kept in memory before the
	// loop's own cap (default 1 MiB).
	MaxResultBytes int
}

func (o Options) environ() []string {
	if o.Environ == nil {
		return os.Environ()
	}
	return o.Environ
}

// ToolReport is what Connect found out about one tool.
type ToolReport struct {
	// Name is the name rein offers: SERVER__tool.
	Name    string `json:"name"`
	Server  string `json:"server"`
	MCPName string `json:"mcp_name"`
	// Effect is the effect class the gates judge the tool by.
	Effect   tool.Effect `json:"effect"`
	Pin      PinState    `json:"pin"`
	Findings []Finding   `json:"findings,omitempty"`
	// Available says whether the tool is offered; Reason says why not.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	// Definition is the canonical definition as the server gives it now;
	// Pinned is the one pinned, when there is one.
	Definition json.RawMessage `json:"definition"`
	Pinned     json.RawMessage `json:"pinned,omitempty"`
}

// ServerReport is one server and its tools.
type ServerReport struct {
	Name string `json:"name"`
	// Transport is "stdio: COMMAND", "http: URL" or "custom".
	Transport string `json:"transport"`
	// Sandboxed says that a stdio server runs in rein's sandbox; a stdio
	// server that does not runs with the user's rights.
	Sandboxed bool         `json:"sandboxed,omitempty"`
	Tools     []ToolReport `json:"tools"`
}

// Set is the servers of a session and the tools they offer. Close it when
// the session ends: it stops the stdio servers.
type Set struct {
	servers []*server
	reports []ServerReport
	tools   []tool.Tool
	pinFile string
}

// Tools returns the available tools, for the session's caller tools.
func (s *Set) Tools() []tool.Tool { return slices.Clone(s.tools) }

// Names returns the available tools' names, for the session's allowlist.
func (s *Set) Names() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Spec().Name
	}
	return names
}

// Servers returns what was found, server by server.
func (s *Set) Servers() []ServerReport { return slices.Clone(s.reports) }

// Unavailable returns the tools that are not offered, with the reason.
func (s *Set) Unavailable() []ToolReport {
	var out []ToolReport
	for _, r := range s.reports {
		for _, t := range r.Tools {
			if !t.Available {
				out = append(out, t)
			}
		}
	}
	return out
}

// Approve pins the definitions of server's tools as they are now, changed
// ones included: the user has seen them (rein mcp pin shows the
// difference first). It returns the tools it pinned anew. A tool with
// injection findings is pinned too, but stays unavailable while they hold.
func (s *Set) Approve(server string) ([]string, error) {
	add := map[string][]byte{}
	for _, r := range s.reports {
		if r.Name != server {
			continue
		}
		for _, t := range r.Tools {
			if t.Pin != PinMatch {
				add[t.MCPName] = t.Definition
			}
		}
	}
	if err := savePins(s.pinFile, map[string]map[string][]byte{server: add}); err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(add)), nil
}

// Close stops every server.
func (s *Set) Close() error {
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.close())
	}
	return errors.Join(errs...)
}

// IsToolName reports whether name has the form of an MCP tool's name in
// rein (SERVER__tool), whether or not such a tool exists.
func IsToolName(name string) bool {
	srv, t, ok := strings.Cut(name, Sep)
	return ok && srv != "" && t != "" && config.ValidServerName(srv)
}

// modelName reports whether name is what a model API accepts as a tool
// name: 1 to 64 ASCII letters, digits, '_' and '-'.
func modelName(name string) bool {
	if len(name) < 1 || len(name) > 64 {
		return false
	}
	for i := range len(name) {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Connect starts (or reaches) every enabled server of cfg, lists its
// tools and judges each. A server that cannot be started or listed is an
// error naming it, and every server already started is stopped: the
// session must not begin without the tools its config promises. A tool
// that cannot be offered is in the Set's reports with the reason.
func Connect(ctx context.Context, cfg config.MCP, opts Options) (*Set, error) {
	if !slices.ContainsFunc(slices.Collect(maps.Values(cfg.Servers)), func(s config.MCPServer) bool { return !s.Disabled }) {
		return &Set{}, nil // no server: no pins to read
	}
	pinFile := opts.PinFile
	if pinFile == "" {
		var err error
		if pinFile, err = DefaultPinFile(); err != nil {
			return nil, err
		}
	}
	set := &Set{pinFile: pinFile}
	listed := map[string][]*sdk.Tool{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		sc := cfg.Servers[name]
		if sc.Disabled {
			continue
		}
		srv, err := dial(ctx, name, sc, opts, pinFile)
		if err != nil {
			set.Close()
			return nil, fmt.Errorf("MCP server %q cannot start: %w", name, err)
		}
		set.servers = append(set.servers, srv)
		tools, err := srv.list(ctx)
		if err != nil {
			set.Close()
			return nil, fmt.Errorf("MCP server %q: listing its tools: %w", name, err)
		}
		listed[name] = tools
	}
	pf, err := loadPins(pinFile)
	if err != nil {
		set.Close()
		return nil, err
	}
	j := newJudge(cfg, listed, opts.Builtin)
	toPin := map[string]map[string][]byte{}
	for _, srv := range set.servers {
		rep := ServerReport{Name: srv.name, Transport: srv.transport, Sandboxed: srv.proc != nil && srv.proc.sandboxed}
		for _, st := range listed[srv.name] {
			tr, t := j.judge(srv, st, pf, opts)
			if t != nil {
				set.tools = append(set.tools, t)
				srv.accept(st.Name, tr.Definition)
				if tr.Pin == PinNew {
					if toPin[srv.name] == nil {
						toPin[srv.name] = map[string][]byte{}
					}
					toPin[srv.name][st.Name] = tr.Definition
				}
			}
			rep.Tools = append(rep.Tools, tr)
		}
		set.reports = append(set.reports, rep)
	}
	if !opts.ReadOnlyPins {
		if err := savePins(pinFile, toPin); err != nil {
			set.Close()
			return nil, err
		}
	}
	return set, nil
}

// canonical is a tool's definition as pinned: name, description, input
// schema and annotations, with object keys sorted (encoding/json sorts a
// map's keys), so that the same definition always has the same bytes.
func canonical(t *sdk.Tool) ([]byte, error) {
	return json.Marshal(struct {
		Name        string               `json:"name"`
		Description string               `json:"description"`
		InputSchema any                  `json:"inputSchema"`
		Annotations *sdk.ToolAnnotations `json:"annotations,omitempty"`
	}{t.Name, t.Description, t.InputSchema, t.Annotations})
}

func mapKeys[V any](m map[string]V) func(func(string) bool) { return maps.Keys(m) }
