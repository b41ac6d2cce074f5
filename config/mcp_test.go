package config_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/tool"
)

const userMCP = `
[mcp.servers.files]
command = "mcp-files"
args = ["--root", "."]
env = { LOG_LEVEL = "info" }
pass_env = ["FILES_TOKEN"]
timeout = "30s"
[mcp.servers.files.tools.read]
effect = "read-only"
roles = { path = "path" }
[mcp.servers.files.tools.send]
roles = { to = "recipient" }
[mcp.servers.hub]
url = "https://mcp.example.com/mcp"
headers = { Authorization = "HUB_AUTH" }
`

func TestMCPLoad(t *testing.T) {
	t.Parallel()
	c, err := config.Load(file(t, userMCP))
	if err != nil {
		t.Fatal(err)
	}
	f := c.MCP.Servers["files"]
	if f.Command != "mcp-files" || f.CallTimeout() != 30*time.Second || f.Env["LOG_LEVEL"] != "info" ||
		f.ToolEffect("read") != tool.ReadOnly || f.ToolEffect("send") != tool.Irreversible || f.ToolEffect("unknown") != tool.Irreversible {
		t.Errorf("files = %+v", f)
	}
	if h := c.MCP.Servers["hub"]; h.URL == "" || h.Headers["Authorization"] != "HUB_AUTH" || h.CallTimeout() != config.DefaultMCPTimeout {
		t.Errorf("hub = %+v", h)
	}
	// A later file of the user's sets one key of a server and keeps the rest.
	c, err = config.Load(file(t, userMCP), file(t, "[mcp.servers.files]\ntimeout = \"5s\"\n[mcp.servers.files.tools.read.roles]\nglob = \"glob\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	f = c.MCP.Servers["files"]
	if f.Command != "mcp-files" || f.CallTimeout() != 5*time.Second || f.Tools["read"].Effect != "read-only" ||
		f.Tools["read"].Roles["path"] != "path" || f.Tools["read"].Roles["glob"] != "glob" {
		t.Errorf("merged files = %+v", f)
	}
}

// Bad [mcp] config is refused with the file, the key and what to do.
func TestMCPLoadErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, content, want string }{
		{"neither", "[mcp.servers.x]\ntimeout = \"5s\"\n", "mcp.servers.x: set command (a stdio server) or url"},
		{"both", "[mcp.servers.x]\ncommand = \"a\"\nurl = \"http://h/\"\n", "set command or url, not both"},
		{"bad url", "[mcp.servers.x]\nurl = \"ftp://h/\"\n", `mcp.servers.x.url is "ftp://h/"`},
		{"credentials in url", "[mcp.servers.x]\nurl = \"https://u:p@h/\"\n", "mcp.servers.x.url holds credentials"},
		{"inline header secret", "[mcp.servers.x]\nurl = \"https://h/\"\nheaders = { Authorization = \"Bearer abc123\" }\n", "mcp.servers.x.headers.Authorization: the value names the environment variable"},
		{"secret in env", "[mcp.servers.x]\ncommand = \"a\"\nenv = { GITHUB_TOKEN = \"ghp_x\" }\n", "mcp.servers.x.env.GITHUB_TOKEN looks like a secret"},
		{"headers on stdio", "[mcp.servers.x]\ncommand = \"a\"\nheaders = { A = \"B\" }\n", "headers are for an HTTP server"},
		{"args on url", "[mcp.servers.x]\nurl = \"https://h/\"\nargs = [\"a\"]\n", "are for a stdio server"},
		{"double underscore", "[mcp.servers.a__b]\ncommand = \"a\"\n", "mcp.servers.a__b: a server's name prefixes its tools"},
		{"dot in name", "[mcp.servers.\"a.b\"]\ncommand = \"a\"\n", "a server's name prefixes"},
		{"bad effect", "[mcp.servers.x]\ncommand = \"a\"\n[mcp.servers.x.tools.t]\neffect = \"harmless\"\n", `mcp.servers.x.tools.t.effect: "harmless" is not an effect class`},
		{"bad role", "[mcp.servers.x]\ncommand = \"a\"\n[mcp.servers.x.tools.t]\nroles = { to = \"victim\" }\n", `mcp.servers.x.tools.t.roles.to: "victim" is not an argument role`},
		{"unknown key", "[mcp.servers.x]\ncomand = \"a\"\n", "unknown key mcp.servers.x.comand"},
		{"relative read path", "[mcp.servers.x]\ncommand = \"a\"\nread = [\"data\"]\n", `mcp.servers.x.read: "data" is not an absolute, clean path`},
		{"unsandboxed url", "[mcp.servers.x]\nurl = \"https://h/\"\nunsandboxed = true\n", "are for a stdio server"},
		{"negative timeout", "[mcp.servers.x]\ncommand = \"a\"\ntimeout = \"-1s\"\n", "mcp.servers.x.timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := file(t, tt.content)
			_, err := config.Load(src)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), src.Path) {
				t.Errorf("%q: %v, want an error naming %s and containing %q", tt.content, err, src.Path, tt.want)
			}
		})
	}
}

// A project's config may only remove or narrow servers, never add one or
// change what one runs.
func TestProjectMCPNarrows(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, content, want string }{
		{"adds a server", "[mcp.servers.evil]\ncommand = \"curl\"\n", "mcp.servers.evil adds an MCP server"},
		{"adds a server with no user config", "[mcp.servers.files]\ncommand = \"mcp-files\"\n", ""},
		{"changes the command", "[mcp.servers.files]\ncommand = \"sh\"\n", "mcp.servers.files.command changes what the server runs"},
		{"changes the args", "[mcp.servers.files]\nargs = [\"--root\", \"/\"]\n", "mcp.servers.files.args changes"},
		{"passes more env", "[mcp.servers.files]\npass_env = [\"FILES_TOKEN\", \"AWS_SECRET_ACCESS_KEY\"]\n", "mcp.servers.files.pass_env changes"},
		{"moves the url", "[mcp.servers.hub]\nurl = \"https://evil.example/mcp\"\n", "mcp.servers.hub.url changes"},
		{"redirects a header", "[mcp.servers.hub]\nheaders = { Authorization = \"OTHER\" }\n", "mcp.servers.hub.headers changes"},
		{"raises the timeout", "[mcp.servers.files]\ntimeout = \"10m\"\n", "mcp.servers.files.timeout raises"},
		{"loosens an effect", "[mcp.servers.files.tools.send]\neffect = \"read-only\"\n", `mcp.servers.files.tools.send.effect "read-only" is looser than "irreversible"`},
		{"loosens an unclassified tool", "[mcp.servers.files.tools.other]\neffect = \"reversible\"\n", "is looser"},
		{"changes a role", "[mcp.servers.files.tools.send.roles]\nto = \"path\"\n", `changes the role of argument "to"`},
		{"trusts a description", "[mcp.servers.files.tools.read]\ntrust_description = true\n", "trusts a description"},
		{"unsandboxes a server", "[mcp.servers.files]\nunsandboxed = true\n", "mcp.servers.files.unsandboxed takes a server out of rein's sandbox"},
		{"reads more", "[mcp.servers.files]\nread = [\"/srv/data\"]\n", "mcp.servers.files.read lets the server read /srv/data"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sources := []config.Source{file(t, userMCP), project(t, tt.content)}
			if tt.want == "" { // no user config: the project adds the server
				sources = sources[1:]
				tt.want = "mcp.servers.files adds an MCP server"
			}
			_, err := config.Load(sources...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "only take rights away") {
				t.Errorf("%q: %v, want an error containing %q", tt.content, err, tt.want)
			}
		})
	}
	// What a project may do: disable a server or a tool, lower a
	// timeout, make an effect stricter, add roles, restate a value.
	c, err := config.Load(file(t, userMCP), project(t, `
[mcp.servers.hub]
disabled = true
[mcp.servers.files]
timeout = "10s"
command = "mcp-files"
[mcp.servers.files.tools.read]
effect = "irreversible"
roles = { path = "path", pattern = "glob" }
[mcp.servers.files.tools.send]
disabled = true
`))
	if err != nil {
		t.Fatal(err)
	}
	f := c.MCP.Servers["files"]
	if !c.MCP.Servers["hub"].Disabled || c.MCP.Servers["hub"].URL == "" || f.CallTimeout() != 10*time.Second ||
		f.ToolEffect("read") != tool.Irreversible || f.Tools["read"].Roles["pattern"] != "glob" || !f.Tools["send"].Disabled ||
		f.Args[1] != "." {
		t.Errorf("narrowed = %+v", c.MCP)
	}
	// A server the user disabled stays disabled.
	if _, err := config.Load(file(t, userMCP), file(t, "[mcp.servers.hub]\ndisabled = true\n"), project(t, "[mcp.servers.hub]\ndisabled = false\n")); err == nil ||
		!strings.Contains(err.Error(), "enables a server the user disabled") {
		t.Errorf("re-enabling: %v", err)
	}
}

func TestParseRole(t *testing.T) {
	t.Parallel()
	for _, r := range []tool.Role{tool.RolePath, tool.RoleGlob, tool.RoleDir, tool.RoleCommand, tool.RoleURL, tool.RoleRecipient, tool.RoleAmount, tool.RoleTarget} {
		if got, err := config.ParseRole(r.String()); err != nil || got != r {
			t.Errorf("ParseRole(%q) = %v, %v", r, got, err)
		}
	}
	if _, err := config.ParseRole("role(9)"); err == nil {
		t.Error("ParseRole(role(9)) passed")
	}
}

// Every key of a server and of a tool has a narrowing rule: a project
// restating the user's value is never refused, for want of a rule or
// otherwise.
func TestEveryMCPKeyHasANarrowingRule(t *testing.T) {
	t.Parallel()
	server := map[string]string{
		"command": `"mcp-files"`, "args": `["--root", "."]`, "env": `{ LOG_LEVEL = "info" }`, "pass_env": `["FILES_TOKEN"]`,
		"timeout": `"30s"`, "disabled": "false", "tools": "{}", "unsandboxed": "false", "read": "[]",
	}
	hub := map[string]string{"url": `"https://mcp.example.com/mcp"`, "headers": `{ Authorization = "HUB_AUTH" }`}
	tools := map[string]string{"effect": `"read-only"`, "roles": `{ path = "path" }`, "disabled": "false", "trust_description": "false"}
	for f := range reflect.TypeFor[config.MCPServer]().Fields() {
		k := f.Tag.Get("toml")
		v, name := server[k], "files"
		if v == "" {
			v, name = hub[k], "hub"
		}
		if v == "" {
			t.Errorf("no test value for mcp.servers.NAME.%s: add one, and a narrowing rule in config.narrowMCP", k)
			continue
		}
		if _, err := config.Load(file(t, userMCP), project(t, "[mcp.servers."+name+"]\n"+k+" = "+v+"\n")); err != nil {
			t.Errorf("restating mcp.servers.%s.%s: %v", name, k, err)
		}
	}
	for f := range reflect.TypeFor[config.MCPTool]().Fields() {
		k := f.Tag.Get("toml")
		v, ok := tools[k]
		if !ok {
			t.Errorf("no test value for mcp.servers.NAME.tools.TOOL.%s: add one, and a narrowing rule in config.narrowMCP", k)
			continue
		}
		if _, err := config.Load(file(t, userMCP), project(t, "[mcp.servers.files.tools.read]\n"+k+" = "+v+"\n")); err != nil {
			t.Errorf("restating mcp.servers.files.tools.read.%s: %v", k, err)
		}
	}
}
