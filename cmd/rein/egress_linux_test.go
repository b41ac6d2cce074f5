//go:build linux

package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/internal/testnet"
)

// TestRunEgress is the network allowlist end to end: [sandbox.network]
// in the user's config gives a session's commands the test host and
// nothing else, and every connection is in the audit log.
func TestRunEgress(t *testing.T) {
	h := testHost(t)

	for _, c := range []struct {
		backend string
		args    []string
		command string
		out     string
	}{
		{"landlock", nil,
			`curl -sS http://` + h.Addr.String() + `/; echo; curl -s -o /dev/null -w '%{http_code}\\n' http://` + h.Gateway.String() + `/`,
			`from the test host\n403`},
		{"docker", []string{"--image", "rein-test-busybox"},
			`wget -qO- http://` + h.Addr.String() + `/; echo; wget -qO- http://` + h.Gateway.String() + `/ >/dev/null 2>&1 || echo refused`,
			`from the test host\nrefused`},
	} {
		t.Run(c.backend, func(t *testing.T) {
			if c.backend == "docker" {
				testenv.Need(t, "docker", testImage())
			}
			runEgress(t, h, c.backend, c.args, c.command, c.out)
		})
	}
}

// runEgress runs command through run_bash in a session of backend with
// the test host h on the allowlist, and checks the command's output and
// the audit log: the listed host answered, the gateway was refused.
func runEgress(t *testing.T, h *testnet.Host, backend string, args []string, cmd, out string) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	writeFile(t, filepath.Join(dir, "config", "rein", "config.toml"), "[sandbox.network]\nallow = [\""+h.Addr.String()+"\"]\n")
	script := filepath.Join(dir, "s.json")
	writeFile(t, script, `{"turns":[{"text":"x","calls":[{"tool":"run_bash","args":{"command":"`+cmd+`"}}]},{"text":"done"}]}`)
	auditDir := filepath.Join(dir, "audit")
	argv := append([]string{"run", "--model", "scripted:" + script, "--workdir", workIn(t, dir), "--mode", "bypass",
		"--tools", "run_bash", "--sandbox", backend, "--audit-dir", auditDir}, args...)
	tool := strings.Fields(cmd)[0] // the drift gate wants the task to name it
	code, _, stderr := runRein(t, "", append(argv, "Fetch both pages with "+tool+".")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("audit logs: %v", logs)
	}
	data, _ := os.ReadFile(logs[0])
	log := string(data)
	for _, want := range []string{
		out, // the command's output: the listed host answered, the other was refused
		`"type":"egress"`, `"decision":"allow"`, `"host":"` + h.Addr.String() + `"`,
		`"decision":"deny","gate":"egress","reason":"egress refused: not on the allowlist: ` + h.Gateway.String(),
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log[strings.Index(log, `"seq":2`):])
		}
	}
}

// An MCP server's connections go through the session's egress proxy as a
// command's do, and each is in the session's audit log, named as the
// servers': the listed host answers, another address is refused.
func TestMCPServerEgress(t *testing.T) {
	h := testHost(t)

	dir := t.TempDir()
	bin := filepath.Join(dir, "mcptestserver")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "../../mcp/internal/testserver/mcptestserver").CombinedOutput(); err != nil {
		t.Fatalf("build the test server: %v\n%s", err, out)
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	writeFile(t, filepath.Join(dir, "config", "rein", "config.toml"), `[sandbox.network]
allow = ["`+h.Addr.String()+`"]

[mcp.servers.snoop]
command = "`+bin+`"
args = ["-snoop"]

[mcp.servers.snoop.tools.snoop]
effect = "read-only"
`)
	listed, other := "http://"+h.Addr.String()+"/", "http://"+h.Gateway.String()+"/"
	script := filepath.Join(dir, "s.json")
	writeFile(t, script, `{"turns":[{"text":"x","calls":[
	 {"tool":"snoop__snoop","args":{"op":"fetch","arg":"`+listed+`"}},
	 {"tool":"snoop__snoop","args":{"op":"fetch","arg":"`+other+`"}}]},{"text":"done"}]}`)
	auditDir := filepath.Join(dir, "audit")
	code, stdout, stderr := runRein(t, "", "run", "--model", "scripted:"+script, "--workdir", workIn(t, dir), "--mode", "bypass",
		"--sandbox", "landlock", "--audit-dir", auditDir, "Look around with snoop.")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("audit logs: %v", logs)
	}
	data, _ := os.ReadFile(logs[0])
	log := string(data)
	for _, want := range []string{
		"got: 200 from the test host", // the listed host answered the server
		`"type":"egress","prev":`,
		`"tool":"(mcp servers)","decision":"allow"`, `"host":"` + h.Addr.String() + `"`,
		`"tool":"(mcp servers)","decision":"deny","gate":"egress","reason":"egress refused: not on the allowlist: ` + h.Gateway.String(),
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
}

// testHost is a test host in a network namespace of its own that answers
// "from the test host" on port 80, for a landlock session run as root.
func testHost(t *testing.T) *testnet.Host {
	t.Helper()
	needLandlock(t)
	if os.Geteuid() != 0 {
		testenv.Need(t, "netns", os.ErrPermission)
	}
	h, err := testnet.New(t.Context())
	testenv.Need(t, "netns", err)
	t.Cleanup(func() { _ = h.Close() })
	ln, err := h.Listen(80)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("from the test host")) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return h
}
