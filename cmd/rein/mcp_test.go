package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/sandbox"
)

// rein run offers the tools of the configured MCP servers, records their
// calls in the audit log, leaves out the hostile ones with the reason, and
// refuses to start when a server cannot; rein mcp list shows pin states;
// rein mcp pin shows a changed definition's difference and pins it after
// a yes (here --yes).
func TestMCPCommands(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcptestserver")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "../../mcp/internal/testserver/mcptestserver").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	writeConfig := func(srvArgs string) {
		t.Helper()
		c := "[mcp.servers.srv]\ncommand = \"" + bin + "\"\nargs = [" + srvArgs + "]\n[mcp.servers.srv.tools.echo]\neffect = \"read-only\"\n" +
			"[mcp.servers.evil]\ncommand = \"" + bin + "\"\nargs = [\"-hostile\"]\n"
		if err := os.MkdirAll(filepath.Join(dir, "config", "rein"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config", "rein", "config.toml"), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rein := func(args ...string) (code int, stdout, stderr string) {
		t.Helper()
		var o, e bytes.Buffer
		code = run(t.Context(), args, env{stdin: strings.NewReader(""), stdout: &o, stderr: &e})
		return code, o.String(), e.String()
	}
	want := func(what, s string, subs ...string) {
		t.Helper()
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				t.Errorf("%s lacks %q:\n%s", what, sub, s)
			}
		}
	}
	writeConfig("")

	code, out, errOut := rein("mcp", "list", "--workdir", work)
	if code != 0 {
		t.Fatalf("mcp list: %d\n%s%s", code, out, errOut)
	}
	want("mcp list", out, "srv__echo", "read-only", "new", "offered", "evil__poisoned", "NOT OFFERED: its definition carries injection markers")

	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"Echo.","calls":[{"tool":"srv__echo","args":{"text":"hi from mcp"}}]},{"text":"Done."}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "audit")
	code, out, errOut = rein("run", "--model", "scripted:"+script, "--workdir", work, "--audit-dir", audit, "--sandbox", "none", "Echo hi")
	if code != 0 {
		t.Fatalf("run: %d\n%s%s", code, out, errOut)
	}
	want("run stderr", errOut, "MCP server srv (stdio: "+bin+") runs UNSANDBOXED", "MCP tool evil__poisoned is not offered")
	logs, _ := filepath.Glob(filepath.Join(audit, "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("audit logs: %v", logs)
	}
	data, _ := os.ReadFile(logs[0])
	want("audit log", string(data), `"tool":"srv__echo"`, "echo: hi from mcp", `"mcp_unsandboxed":["evil (stdio: `)

	// In the landlock sandbox the servers run sandboxed: nothing is
	// announced or recorded as unsandboxed, except a server the user's
	// config takes out of the sandbox.
	if _, err := sandbox.LandlockStatus(); err == nil {
		for _, tt := range []struct {
			extra, announced, quiet string
		}{
			{"", "", "UNSANDBOXED"},
			{"unsandboxed = true\n", "MCP server evil (stdio: " + bin + " -hostile) runs UNSANDBOXED", "MCP server srv (stdio"},
		} {
			writeConfig("")
			cfgFile := filepath.Join(dir, "config", "rein", "config.toml")
			c, _ := os.ReadFile(cfgFile)
			if err := os.WriteFile(cfgFile, append(c, tt.extra...), 0o644); err != nil {
				t.Fatal(err)
			}
			sbAudit := filepath.Join(t.TempDir(), "audit")
			code, out, errOut := rein("run", "--model", "scripted:"+script, "--workdir", work, "--audit-dir", sbAudit, "--sandbox", "landlock", "Echo hi")
			if code != 0 {
				t.Fatalf("run in landlock: %d\n%s%s", code, out, errOut)
			}
			if tt.announced != "" {
				want("run in landlock stderr", errOut, tt.announced)
			}
			if strings.Contains(errOut, tt.quiet) {
				t.Errorf("run in landlock with %q announces %q:\n%s", tt.extra, tt.quiet, errOut)
			}
			logs, _ := filepath.Glob(filepath.Join(sbAudit, "*.jsonl"))
			if len(logs) != 1 {
				t.Fatalf("audit logs: %v", logs)
			}
			data, _ := os.ReadFile(logs[0])
			want("audit log in landlock", string(data), `"tool":"srv__echo"`, "echo: hi from mcp")
			if rec := strings.Contains(string(data), `"mcp_unsandboxed"`); rec != (tt.extra != "") {
				t.Errorf("with %q, mcp_unsandboxed recorded: %v", tt.extra, rec)
			}
		}
		writeConfig("")
	} else {
		t.Logf("landlock unavailable, the sandboxed run is not tried: %v", err)
	}

	// The server's echo changes: a rug pull between sessions.
	writeConfig(`"-variant", "2"`)
	_, out, _ = rein("mcp", "list", "--workdir", work)
	want("mcp list after the change", out, "changed", "NOT OFFERED: its definition changed since it was pinned")
	code, out, errOut = rein("mcp", "pin", "srv", "--workdir", work)
	if code != exitUsage {
		t.Errorf("mcp pin without a terminal: %d, want %d", code, exitUsage)
	}
	want("mcp pin", out+errOut, "-   \"description\": \"Echoes the text it is given.\",\n  +   \"description\": \"Echoes the text it is given, now better.\"", "pass --yes")
	code, out, errOut = rein("mcp", "pin", "srv", "--yes", "--workdir", work)
	if code != 0 {
		t.Fatalf("mcp pin --yes: %d\n%s%s", code, out, errOut)
	}
	want("mcp pin --yes", out, "pinned: echo")
	_, out, _ = rein("mcp", "list", "--workdir", work)
	if strings.Contains(out, "srv__echo                        read-only    changed") {
		t.Errorf("still changed after pinning:\n%s", out)
	}

	// A project may not add a server.
	if err := os.MkdirAll(filepath.Join(work, ".rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, ".rein", "config.toml"), []byte("[mcp.servers.planted]\ncommand = \"sh\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = rein("run", "--model", "scripted:"+script, "--workdir", work, "--audit-dir", audit, "Echo hi")
	if code != exitUsage {
		t.Errorf("run with a project adding a server: %d, want %d", code, exitUsage)
	}
	want("project adding a server", errOut, "mcp.servers.planted adds an MCP server")
	os.Remove(filepath.Join(work, ".rein", "config.toml"))

	// A server that cannot start stops the session before the model is called.
	if err := os.WriteFile(filepath.Join(dir, "config", "rein", "config.toml"), []byte("[mcp.servers.gone]\ncommand = \""+filepath.Join(dir, "nothing")+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = rein("run", "--model", "scripted:"+script, "--workdir", work, "--audit-dir", audit, "Echo hi")
	if code != exitError {
		t.Errorf("run with a broken server: %d, want %d", code, exitError)
	}
	want("broken server", errOut, `refusing to start: MCP server "gone" cannot start`)
	// The conversation too, before it asks anything.
	code, _, errOut = rein("--model", "scripted:"+script, "--workdir", work, "--audit-dir", audit)
	if code != exitError {
		t.Errorf("chat with a broken server: %d, want %d", code, exitError)
	}
	want("chat, broken server", errOut, `refusing to start: MCP server "gone" cannot start`)
	if logs, _ := filepath.Glob(filepath.Join(audit, "*.jsonl")); len(logs) != 1 {
		t.Errorf("a session that could not start left a log: %v", logs)
	}
}

// rein mcp proxy serves a host (the go-sdk client) over stdio: the
// configured server's tools, gated (an unclassified tool, with no way to
// ask, is refused), recorded in an audit log of the proxy's session.
func TestMCPProxyCommand(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcptestserver")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "../../mcp/internal/testserver/mcptestserver").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	work := filepath.Join(dir, "work")
	cfgFile := filepath.Join(dir, "proxy.toml")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgFile, []byte("[mcp.servers.srv]\ncommand = \""+bin+"\"\n[mcp.servers.srv.tools.echo]\neffect = \"read-only\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "audit")
	hostIn, reinOut := io.Pipe()
	reinIn, hostOut := io.Pipe()
	var errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(t.Context(), []string{"mcp", "proxy", "--config", cfgFile, "--workdir", work, "--audit-dir", audit},
			env{stdin: reinIn, stdout: reinOut, stderr: &errOut})
		reinOut.Close()
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "host"}, nil).Connect(t.Context(), &sdk.IOTransport{Reader: hostIn, Writer: hostOut}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, errOut.String())
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "srv__echo", Arguments: map[string]any{"text": "via proxy"}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "echo: via proxy" {
		t.Errorf("srv__echo: %v %+v", err, res)
	}
	res, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "srv__send", Arguments: map[string]any{"to": "a@b.example", "body": "x"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "rein refused") {
		t.Errorf("srv__send was not refused: %v %+v", err, res)
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Errorf("proxy exit %d\n%s", code, errOut.String())
	}
	logs, _ := filepath.Glob(filepath.Join(audit, "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("audit logs: %v\n%s", logs, errOut.String())
	}
	data, _ := os.ReadFile(logs[0])
	for _, w := range []string{`"tool":"srv__echo"`, `"tool":"srv__send"`, `"decision":"deny"`, `"type":"stop"`} {
		if !strings.Contains(string(data), w) {
			t.Errorf("audit log lacks %s", w)
		}
	}
}
