package config

import (
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/reinhq/rein/secret"
	"github.com/reinhq/rein/tool"
)

// MCP configures the MCP servers whose tools rein offers the model (package
// mcp). Only the user's own files and --config may add a server; a
// project's .rein/config.toml may only disable servers and tools or make
// them stricter.
type MCP struct {
	// Servers are keyed by the name that prefixes their tools: server
	// "github" offers "github__create_issue".
	Servers map[string]MCPServer `toml:"servers" json:"servers,omitempty"`
}

// MCPServer is one MCP server: a command rein starts and talks to over
// stdio, or the URL of a streamable HTTP endpoint.
type MCPServer struct {
	// Command and Args start a stdio server. The server gets Env and the
	// variables PassEnv names, and nothing else of rein's environment but
	// PATH and HOME.
	Command string   `toml:"command" json:"command,omitempty"`
	Args    []string `toml:"args" json:"args,omitempty"`
	// Env sets variables for the server, literally; it is not recorded in
	// the session's start record. Secrets do not go here: name them in
	// PassEnv.
	Env map[string]string `toml:"env" json:"-"`
	// PassEnv names variables of rein's own environment the server gets
	// (its tokens).
	PassEnv []string `toml:"pass_env" json:"pass_env,omitempty"`
	// URL is a streamable HTTP endpoint (http or https).
	URL string `toml:"url" json:"url,omitempty"`
	// Headers are sent with every HTTP request; each value names the
	// environment variable that holds the header's value, never the value.
	Headers map[string]string `toml:"headers" json:"headers,omitempty"`
	// Timeout bounds one tool call (default 60s).
	Timeout Duration `toml:"timeout" json:"timeout,omitempty"`
	// Disabled keeps the server from being started.
	Disabled bool `toml:"disabled" json:"disabled,omitempty"`
	// Unsandboxed runs a stdio server with the user's rights, outside
	// rein's sandbox (announced at start and recorded); by default it runs
	// in the session's sandbox backend, and cannot start where there is
	// none. Only the user's own config may set it.
	Unsandboxed bool `toml:"unsandboxed" json:"unsandboxed,omitempty"`
	// Read are more absolute paths a sandboxed stdio server may read and
	// execute (an interpreter's modules, a directory of data): none may be
	// the root, hold the home directory or a credential path.
	Read []string `toml:"read" json:"read,omitempty"`
	// Tools classify the server's tools by their MCP name (without the
	// server prefix).
	Tools map[string]MCPTool `toml:"tools" json:"tools,omitempty"`
}

// MCPTool is rein's classification of one MCP tool; the server's own
// annotations may only make it stricter.
type MCPTool struct {
	// Effect is read-only, reversible or irreversible; empty means
	// irreversible (every call asks).
	Effect string `toml:"effect" json:"effect,omitempty"`
	// Roles says what the tool's top-level string arguments name (path,
	// glob, dir, command, url, recipient, amount), so the gates judge them
	// as they judge a built-in tool's.
	Roles map[string]string `toml:"roles" json:"roles,omitempty"`
	// Disabled hides the tool.
	Disabled bool `toml:"disabled" json:"disabled,omitempty"`
	// TrustDescription offers the tool although rein's scan found
	// injection markers in its description or schema (a false alarm the
	// user has read). Only the user's own config may set it.
	TrustDescription bool `toml:"trust_description" json:"trust_description,omitempty"`
}

// DefaultMCPTimeout bounds one MCP tool call when the config sets none.
const DefaultMCPTimeout = 60 * time.Second

// MinMCPStartTimeout is the least time a server gets to start and list
// its tools, whatever its per-call timeout: a process that starts a
// runtime (node, python) or runs in a fresh sandbox is slower to answer
// its first message than a call; a start that hangs still ends.
const MinMCPStartTimeout = 30 * time.Second

// StartTimeout bounds the server's start: the handshake and the listing
// of its tools. It is its call timeout, and at least MinMCPStartTimeout.
func (s MCPServer) StartTimeout() time.Duration {
	return max(s.CallTimeout(), MinMCPStartTimeout)
}

// CallTimeout is the server's per-call timeout.
func (s MCPServer) CallTimeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultMCPTimeout
	}
	return time.Duration(s.Timeout)
}

// ToolEffect returns a tool's configured effect class: irreversible when
// the config does not classify it.
func (s MCPServer) ToolEffect(name string) tool.Effect {
	e, _ := ParseEffect(s.Tools[name].Effect)
	return e
}

// ParseEffect parses an effect class by name; "" is irreversible.
func ParseEffect(s string) (tool.Effect, error) {
	if s == "" {
		return tool.Irreversible, nil
	}
	for _, e := range []tool.Effect{tool.ReadOnly, tool.Reversible, tool.Irreversible} {
		if e.String() == s {
			return e, nil
		}
	}
	return tool.Irreversible, fmt.Errorf("%q is not an effect class: use read-only, reversible or irreversible", s)
}

// ParseRole parses an argument role by name (tool.Role's names).
func ParseRole(s string) (tool.Role, error) {
	var names []string
	for r := tool.RolePath; !strings.HasPrefix(r.String(), "role("); r++ {
		if r.String() == s {
			return r, nil
		}
		names = append(names, r.String())
	}
	return 0, fmt.Errorf("%q is not an argument role: use one of %s", s, strings.Join(names, ", "))
}

// serverName is what an MCP server may be called: its name prefixes its
// tools with "__", which it may not hold itself.
var serverName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*(_[A-Za-z0-9-]+)*$`)
})

// ValidServerName reports whether s may name an MCP server.
func ValidServerName(s string) bool { return serverName().MatchString(s) && len(s) <= 32 }

// envName is an environment variable's name.
var envName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
})

// validMCP checks the [mcp] section; errors name the key and what to do.
func validMCP(m MCP) error {
	for _, name := range slices.Sorted(maps.Keys(m.Servers)) {
		s := m.Servers[name]
		key := "mcp.servers." + name
		if !ValidServerName(name) {
			return fmt.Errorf("%s: a server's name prefixes its tools (NAME__tool): use at most 32 letters, digits, '-' and single '_'", key)
		}
		switch {
		case s.Command == "" && s.URL == "":
			return fmt.Errorf("%s: set command (a stdio server) or url (a streamable HTTP endpoint)", key)
		case s.Command != "" && s.URL != "":
			return fmt.Errorf("%s: set command or url, not both", key)
		case s.URL != "":
			u, err := url.Parse(s.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%s.url is %q: write an absolute http or https URL", key, s.URL)
			}
			if u.User != nil {
				return fmt.Errorf("%s.url holds credentials: put them in an environment variable and name it in %s.headers", key, key)
			}
			if len(s.Args) > 0 || len(s.Env) > 0 || len(s.PassEnv) > 0 || len(s.Read) > 0 || s.Unsandboxed {
				return fmt.Errorf("%s: args, env, pass_env, read and unsandboxed are for a stdio server (command), not a url", key)
			}
		default:
			if len(s.Headers) > 0 {
				return fmt.Errorf("%s.headers are for an HTTP server (url); a stdio server gets its secrets through pass_env", key)
			}
		}
		for _, h := range slices.Sorted(maps.Keys(s.Headers)) {
			if !envName().MatchString(s.Headers[h]) {
				return fmt.Errorf("%s.headers.%s: the value names the environment variable that holds the header, never the header itself: export it (say MCP_%s_TOKEN) and write %s = \"MCP_%s_TOKEN\"",
					key, h, strings.ToUpper(strings.ReplaceAll(name, "-", "_")), h, strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			if !envName().MatchString(k) {
				return fmt.Errorf("%s.env: %q is not a variable name", key, k)
			}
			if secret.LooksSecret(k) {
				return fmt.Errorf("%s.env.%s looks like a secret: keep it out of config files; export it and list it in %s.pass_env", key, k, key)
			}
		}
		for _, r := range s.Read {
			if !filepath.IsAbs(r) || filepath.Clean(r) != r {
				return fmt.Errorf("%s.read: %q is not an absolute, clean path", key, r)
			}
		}
		for _, k := range s.PassEnv {
			if !envName().MatchString(k) {
				return fmt.Errorf("%s.pass_env: %q is not a variable name", key, k)
			}
		}
		if s.Timeout < 0 {
			return fmt.Errorf("%s.timeout is %v: it must be positive", key, time.Duration(s.Timeout))
		}
		for _, tn := range slices.Sorted(maps.Keys(s.Tools)) {
			t := s.Tools[tn]
			tkey := key + ".tools." + tn
			if _, err := ParseEffect(t.Effect); err != nil {
				return fmt.Errorf("%s.effect: %w", tkey, err)
			}
			for _, arg := range slices.Sorted(maps.Keys(t.Roles)) {
				if _, err := ParseRole(t.Roles[arg]); err != nil {
					return fmt.Errorf("%s.roles.%s: %w", tkey, arg, err)
				}
			}
		}
	}
	return nil
}

// cloneMCP copies the section deeply, so that decoding a file into a copy
// leaves the original as it was.
func cloneMCP(m MCP) MCP {
	if m.Servers == nil {
		return MCP{}
	}
	out := MCP{Servers: make(map[string]MCPServer, len(m.Servers))}
	for name, s := range m.Servers {
		out.Servers[name] = cloneServer(s)
	}
	return out
}

func cloneServer(s MCPServer) MCPServer {
	s.Args = slices.Clone(s.Args)
	s.Env = maps.Clone(s.Env)
	s.PassEnv = slices.Clone(s.PassEnv)
	s.Read = slices.Clone(s.Read)
	s.Headers = maps.Clone(s.Headers)
	if s.Tools != nil {
		tools := make(map[string]MCPTool, len(s.Tools))
		for n, t := range s.Tools {
			t.Roles = maps.Clone(t.Roles)
			tools[n] = t
		}
		s.Tools = tools
	}
	return s
}

// mergeMCP lays one file's servers (file, decoded alone) over prev: a key
// the file sets replaces the one before it, a key it does not set is kept.
// TOML would otherwise replace a whole server when a later file sets one
// of its keys (a project's disabled = true would drop its command).
func mergeMCP(prev MCP, file MCP, md toml.MetaData) MCP {
	out := cloneMCP(prev)
	if len(file.Servers) == 0 {
		return out
	}
	if out.Servers == nil {
		out.Servers = map[string]MCPServer{}
	}
	for name, fs := range file.Servers {
		s := out.Servers[name]
		overlay(&s, fs, md, "mcp", "servers", name)
		for tn, ft := range fs.Tools {
			if s.Tools == nil {
				s.Tools = map[string]MCPTool{}
			}
			t := s.Tools[tn]
			tpath := []string{"mcp", "servers", name, "tools", tn}
			roles := t.Roles
			overlay(&t, ft, md, tpath...)
			if md.IsDefined(append(tpath, "roles")...) {
				t.Roles = maps.Clone(roles)
				if t.Roles == nil {
					t.Roles = map[string]string{}
				}
				maps.Copy(t.Roles, ft.Roles)
			}
			s.Tools[tn] = t
		}
		out.Servers[name] = s
	}
	return out
}

// overlay copies into dst each field of src (a struct of the same type)
// whose TOML key under path the file defined; tables of tools and roles
// are merged by the caller.
func overlay[T any](dst *T, src T, md toml.MetaData, path ...string) {
	dv, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for i, f := range slices.Collect(dv.Type().Fields()) {
		k := f.Tag.Get("toml")
		if k == "tools" || k == "roles" {
			continue
		}
		if md.IsDefined(append(slices.Clone(path), k)...) {
			dv.Field(i).Set(sv.Field(i))
		}
	}
}

// strictness orders effect classes: a stricter class asks more.
func strictness(e tool.Effect) int { return int(e) }

// narrowMCP judges one key under mcp a project's file set: it may disable
// servers and tools, lower a timeout, make an effect class stricter, mark
// more arguments with roles; it may not add a server, change what one runs
// or where it connects, re-enable what was disabled, or trust a
// description.
func narrowMCP(key toml.Key, prev, next *Config) error {
	k := key.String()
	if len(key) <= 2 {
		return nil // mcp, mcp.servers: tables judged key by key
	}
	name := key[2]
	was, existed := prev.MCP.Servers[name]
	now := next.MCP.Servers[name]
	if !existed {
		return fmt.Errorf("mcp.servers.%s adds an MCP server", name)
	}
	if len(key) == 3 {
		return nil
	}
	switch field := key[3]; field {
	case "read":
		for _, r := range now.Read {
			if !slices.Contains(was.Read, r) {
				return fmt.Errorf("%s lets the server read %s", k, r)
			}
		}
		return nil
	case "command", "args", "env", "pass_env", "url", "headers":
		if !reflect.DeepEqual(serverField(was, field), serverField(now, field)) {
			return fmt.Errorf("%s changes what the server runs or where rein connects", k)
		}
		return nil
	case "timeout":
		if now.CallTimeout() > was.CallTimeout() {
			return fmt.Errorf("%s raises the per-call timeout", k)
		}
		return nil
	case "disabled":
		if was.Disabled && !now.Disabled {
			return fmt.Errorf("%s enables a server the user disabled", k)
		}
		return nil
	case "unsandboxed":
		if now.Unsandboxed && !was.Unsandboxed {
			return fmt.Errorf("%s takes a server out of rein's sandbox", k)
		}
		return nil
	case "tools":
		if len(key) <= 5 {
			return nil
		}
		tn := key[4]
		wt, nt := was.Tools[tn], now.Tools[tn]
		switch key[5] {
		case "effect":
			we, _ := ParseEffect(wt.Effect)
			ne, err := ParseEffect(nt.Effect)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			if strictness(ne) < strictness(we) {
				return fmt.Errorf("%s %q is looser than %q", k, ne, we)
			}
			return nil
		case "roles":
			for arg, r := range wt.Roles {
				if nt.Roles[arg] != r {
					return fmt.Errorf("%s changes the role of argument %q from %q", k, arg, r)
				}
			}
			return nil
		case "disabled":
			if wt.Disabled && !nt.Disabled {
				return fmt.Errorf("%s enables a tool the user disabled", k)
			}
			return nil
		case "trust_description":
			if nt.TrustDescription && !wt.TrustDescription {
				return fmt.Errorf("%s trusts a description rein found injection markers in", k)
			}
			return nil
		}
	}
	return fmt.Errorf("%s cannot be set by a project: rein has no rule for whether it takes rights away", k)
}

// serverField returns the field of s with the given TOML key.
func serverField(s MCPServer, key string) any {
	v := reflect.ValueOf(s)
	for i, f := range slices.Collect(v.Type().Fields()) {
		if f.Tag.Get("toml") == key {
			return v.Field(i).Interface()
		}
	}
	panic("config: no MCPServer field " + key)
}
