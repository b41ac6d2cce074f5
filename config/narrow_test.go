package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/config"
)

// builtinCaps is the limit gate's defaults for the tools of these tests:
// send_email and send_money are irreversible (1), write_file and run_bash
// are uncapped, read_file is read-only.
func builtinCaps(tool string) (int, bool) {
	switch tool {
	case "send_email", "send_money":
		return 1, true
	case "write_file", "run_bash", "read_file":
		return 0, false
	}
	return 1, true
}

func project(t *testing.T, content string) config.Source {
	t.Helper()
	s := file(t, content)
	s.Narrow, s.Caps = true, builtinCaps
	return s
}

// A project's file is compared with the effective value, built-in defaults
// included, not only with what an earlier file set: with no user config at
// all, none of these may widen what rein gives by default.
func TestProjectCannotWidenDefaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, content, want string }{
		{"irreversible limit above the built-in cap", "[tools.limits]\nsend_email = 50\n", "tools.limits.send_email raises the limit from the built-in 1 to 50"},
		{"inline table", "[tools]\nlimits = { send_money = 2 }\n", "tools.limits.send_money raises the limit from the built-in 1 to 2"},
		{"dotted key", "tools.limits.send_email = 3\n", "tools.limits.send_email raises"},
		{"unknown tool counts as irreversible", "[tools.limits]\nmcp_deploy = 9\n", "tools.limits.mcp_deploy raises the limit from the built-in 1"},
		{"durability relaxed", "[audit]\ndurability = \"flush\"\n", `audit.durability "flush" is weaker than "fsync"`},
		{"audit dir", "[audit]\ndir = \"/tmp/elsewhere\"\n", "audit.dir moves the audit log"},
		{"steps above the default", "[limits]\nmax_steps = 41\n", "limits.max_steps raises"},
		{"tool calls lifted", "[limits]\nmax_tool_calls = \"none\"\n", "limits.max_tool_calls raises"},
		{"tokens above the default", "[limits]\nmax_tokens = 10000000\n", "limits.max_tokens raises"},
		{"cost cap lifted", "[limits]\nmax_cost_usd = \"none\"\n", "limits.max_cost_usd raises"},
		{"timeout above the default", "[limits]\ntimeout = \"2h\"\n", "limits.timeout raises"},
		{"tool added", "[tools]\nallow = [\"read_file\", \"send_email\"]\n", `tools.allow adds "send_email"`},
		{"mode loosened", "[permissions]\nmode = \"accept-edits\"\n", `"accept-edits" is looser than "default"`},
		{"bypass", "permissions.mode = \"bypass\"\n", `"bypass" is looser`},
		{"allow rule", "[[permissions.rules]]\ntool = \"run_bash\"\ndecision = \"allow\"\ncommand = \"curl\"\n", "is an allow rule"},
		{"allow rule spelled otherwise", "[[permissions.rules]]\ntool = \"run_bash\"\ndecision = \"Allow\"\n", `decision "Allow"`},
		{"internal host", "[network]\nallow = [\"169.254.169.254\"]\n", `network.allow adds "169.254.169.254"`},
		{"junk network entry", "[network]\nallow = [\"http://evil.example/x\"]\n", "network.allow"},
		{"flow off", "[flow]\non_hit = \"off\"\n", `flow.on_hit "off" is looser`},
		{"sandbox none", "[sandbox]\nbackend = \"none\"\n", `sandbox.backend "none"`},
		{"sandbox image", "[sandbox]\nimage = \"evil:latest\"\n", "sandbox.image"},
		{"sandbox runtime", "[sandbox]\nruntime = \"podman\"\n", "sandbox.runtime"},
		{"prices", "[prices.\"anthropic:claude-x\"]\ninput = 0\noutput = 0\n", "prices change what the cost cap counts"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Load(project(t, tt.content))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "only take rights away") {
				t.Errorf("%q: %v, want an error containing %q", tt.content, err, tt.want)
			}
		})
	}
}

// Junk in network.allow is an error in any file, not an entry that
// silently matches nothing.
func TestNetworkAllowJunk(t *testing.T) {
	t.Parallel()
	for _, e := range []string{"http://intranet", "intranet/path", "user@host", "", "host:99999", "a b"} {
		if _, err := config.Load(file(t, "[network]\nallow = [\""+e+"\"]\n")); err == nil || !strings.Contains(err.Error(), "network.allow") {
			t.Errorf("network.allow %q: %v, want an error", e, err)
		}
	}
	c, err := config.Load(file(t, "[network]\nallow = [\"intranet.local\", \"127.0.0.1:8080\", \"[fd00::1]:443\"]\n"))
	if err != nil || len(c.Network.Allow) != 3 {
		t.Errorf("good entries: %v, %v", c.Network.Allow, err)
	}
}

// What a project may still do: lower limits (also below a built-in
// uncapped default), drop tools, make the mode, the flow gate and the
// durability stricter, add ask and deny rules and protected paths, and set
// a key to the value it already has.
func TestProjectMayNarrow(t *testing.T) {
	t.Parallel()
	c, err := config.Load(project(t, `
[limits]
max_steps = 10
max_tool_calls = 50
max_tokens = 1000
max_cost_usd = 1
timeout = "5m"
[tools]
allow = ["read_file", "grep"]
read_lines = 100
[tools.limits]
send_email = 1
write_file = 20
run_bash = 5
[permissions]
mode = "plan"
[[permissions.rules]]
tool = "run_bash"
decision = "deny"
command = "git push"
[[permissions.rules]]
tool = "write_file"
decision = "ask"
path = "docs/**"
[audit]
durability = "fsync"
[flow]
on_hit = "deny"
[sandbox]
backend = "auto"
[protect]
paths = ["deploy/"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MaxSteps != 10 || c.Tools.Limits["write_file"] != 20 || c.Tools.Limits["send_email"] != 1 ||
		c.Permissions.Mode != "plan" || len(c.Permissions.Rules) != 2 || c.Flow.OnHit != "deny" ||
		!slices.Equal(c.Tools.Allow, []string{"read_file", "grep"}) || !slices.Equal(c.Protect.Paths, []string{"deploy/"}) {
		t.Errorf("%+v", c)
	}
	// The user's own config may raise what a project may not.
	user := file(t, "[tools.limits]\nsend_email = 5\n[audit]\ndurability = \"flush\"\n")
	c, err = config.Load(user, project(t, "[tools.limits]\nsend_email = 3\n[audit]\ndurability = \"fsync\"\n"))
	if err != nil || c.Tools.Limits["send_email"] != 3 || c.Audit.Durability != "fsync" {
		t.Errorf("lowering the user's limit: %v, %v", c.Tools.Limits, err)
	}
	if _, err := config.Load(user, project(t, "[tools.limits]\nsend_email = 6\n")); err == nil || !strings.Contains(err.Error(), "from 5 to 6") {
		t.Errorf("raising the user's limit: %v", err)
	}
	// Without Caps every tool counts as capped at 1: fail closed.
	s := file(t, "[tools.limits]\nwrite_file = 20\n")
	s.Narrow = true
	if _, err := config.Load(s); err == nil {
		t.Error("a project raised write_file to 20 with no caps known")
	}
}

// Every key rein knows has a narrowing rule: setting it, in a project,
// to the value it already has is never refused for want of one.
func TestEveryKeyHasANarrowingRule(t *testing.T) {
	t.Parallel()
	values := map[string]string{
		"limits.max_steps": "40", "limits.max_tool_calls": "200", "limits.max_tokens": "200000", "limits.max_cost_usd": "5",
		"limits.timeout": `"30m"`, "tools.allow": `["read_file"]`, "tools.read_lines": "2000", "tools.limits": "{ send_email = 1 }",
		"permissions.mode": `"default"`, "permissions.rules": `[{ tool = "run_bash", decision = "deny", command = "rm" }]`, "permissions.unattended": "true",
		"network.allow": `[]`, "sandbox.backend": `"auto"`, "sandbox.image": `""`, "sandbox.runtime": `""`,
		"sandbox.memory": `"2GiB"`, "sandbox.stage_ask_above": "5", "sandbox.unstaged": "false", "audit.dir": `""`, "audit.durability": `"fsync"`, "flow.on_hit": `"ask"`, "protect.paths": `["x/"]`, "prices": "{}",
		"mcp.servers": "{}", "model.default": `"openai:gpt-4o-mini"`,
		"network.domains": `["docs.example.org"]`, "sandbox.network.allow": `[]`, "sandbox.network.internal": `[]`,
		"sandbox.network.max_connections": "10", "sandbox.network.max_bytes": `"1GiB"`,
		"approvals.url": `"http://127.0.0.1:7878"`, "approvals.token_file": `"/tmp/t"`,
		"telemetry.otlp_endpoint": `"http://127.0.0.1:4318/v1/traces"`, "telemetry.content": "true",
		"budget.day_max_cost_usd": "1", "budget.day_max_tokens": "1000", "budget.tenant_max_cost_usd": "1",
		"budget.tenant_max_tokens": "1000", "budget.tenant": `"acme"`,
	}
	for _, k := range config.Keys() {
		v, ok := values[k]
		if !ok {
			t.Errorf("no test value for key %s: add one, and a narrowing rule in config.narrowKey", k)
			continue
		}
		_, err := config.Load(project(t, k+" = "+v+"\n"))
		if err != nil && strings.Contains(err.Error(), "has no rule") {
			t.Errorf("%s: %v", k, err)
		}
	}
	// A project may not turn staged writes off.
	if _, err := config.Load(project(t, "[sandbox]\nunstaged = true\n")); err == nil {
		t.Error("a project turned staged writes off")
	}
	// A project may lower the staging threshold, not raise or lift it.
	if _, err := config.Load(project(t, "[sandbox]\nstage_ask_above = 5\n")); err != nil {
		t.Errorf("lowering sandbox.stage_ask_above: %v", err)
	}
	for _, v := range []string{"50", "-1"} {
		if _, err := config.Load(project(t, "[sandbox]\nstage_ask_above = "+v+"\n")); err == nil {
			t.Errorf("a project raised sandbox.stage_ask_above to %s", v)
		}
	}
	// A project may not send its agent's questions to a server of its choosing.
	for _, body := range []string{"[approvals]\nurl = \"http://127.0.0.1:9\"\n", "[approvals]\ntoken_file = \"/tmp/t\"\n", "approvals = {}\n"} {
		if _, err := config.Load(project(t, body)); err == nil || !strings.Contains(err.Error(), "approv") {
			t.Errorf("a project set %q: %v", body, err)
		}
	}
	// A project may lower the memory limit, not raise or lift it.
	if _, err := config.Load(project(t, "[sandbox]\nmemory = \"1GiB\"\n")); err != nil {
		t.Errorf("lowering sandbox.memory: %v", err)
	}
	for _, v := range []string{`"3GiB"`, `"none"`, `"-1"`} {
		if _, err := config.Load(project(t, "[sandbox]\nmemory = "+v+"\n")); err == nil {
			t.Errorf("a project raised sandbox.memory to %s", v)
		}
	}
	// A key rein does not know is refused anyway (as unknown).
	if _, err := config.Load(project(t, "[sandbox]\nmemoryx = \"1G\"\n")); err == nil {
		t.Error("an unknown key passed")
	}
}

// Protected paths only ever accumulate: a later file, a project's
// included, cannot drop an earlier file's.
func TestProtectPathsAccumulate(t *testing.T) {
	t.Parallel()
	c, err := config.Load(file(t, "[protect]\npaths = [\"deploy/\", \".terraformrc\"]\n"), project(t, "[protect]\npaths = []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Protect.Paths, []string{"deploy/", ".terraformrc"}) {
		t.Errorf("Protect.Paths = %q", c.Protect.Paths)
	}
	l := c.Protect.List()
	for _, p := range []string{"deploy/run.sh", "infra/.terraformrc", ".git/config", ".bashrc"} {
		if r, ok := l.Match(p); !ok || r.Why == "" {
			t.Errorf("List().Match(%q) = %+v, %v", p, r, ok)
		}
	}
	if _, ok := l.Match("README.md"); ok {
		t.Error("README.md is protected")
	}
	for _, bad := range []string{"/etc/passwd", "../x", "~/.bashrc", "", "["} {
		if _, err := config.Load(file(t, "[protect]\npaths = [\""+bad+"\"]\n")); err == nil || !strings.Contains(err.Error(), "protect.paths") {
			t.Errorf("protect.paths %q: %v, want an error", bad, err)
		}
	}
}

// A project's config may lower or add a cap of the shared budget, never
// raise or lift one, nor choose the tenant whose budget is spent.
func TestBudgetNarrows(t *testing.T) {
	t.Parallel()
	user := "[budget]\nday_max_cost_usd = 10\nday_max_tokens = 100000\ntenant_max_cost_usd = 2\ntenant_max_tokens = 5000\n"
	for _, tc := range []struct {
		project string
		ok      bool
	}{
		{"[budget]\nday_max_cost_usd = 5\n", true},
		{"[budget]\nday_max_tokens = 99999\ntenant_max_tokens = 10\n", true},
		{"[budget]\ntenant_max_cost_usd = 1.5\n", true},
		{"[budget]\nday_max_cost_usd = 10.01\n", false},
		{"[budget]\nday_max_cost_usd = 0\n", false}, // 0 lifts the cap
		{"[budget]\nday_max_tokens = 100001\n", false},
		{"[budget]\ntenant_max_cost_usd = 3\n", false},
		{"[budget]\ntenant_max_tokens = 0\n", false},
		{"[budget]\ntenant = \"other\"\n", false},
		{"budget = { day_max_cost_usd = 50 }\n", false},
	} {
		c, err := config.Load(file(t, user), project(t, tc.project))
		if tc.ok != (err == nil) {
			t.Errorf("project %q: %v, want ok %v", tc.project, err, tc.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), "budget.") {
			t.Errorf("project %q: the error %v does not name the key", tc.project, err)
		}
		if err == nil && (c.Budget.DayMaxCostUSD > 10 || c.Budget.TenantMaxCostUSD > 2) {
			t.Errorf("project %q raised a cap: %+v", tc.project, c.Budget)
		}
	}
	// Where the user set no cap, a project may set one.
	c, err := config.Load(project(t, "[budget]\nday_max_cost_usd = 3\n"))
	if err != nil || c.Budget.Caps().DayCostUSD != 3 {
		t.Errorf("a project's cap where there was none: %+v, %v", c.Budget, err)
	}
	// Bad values name the key.
	for _, bad := range []string{"day_max_cost_usd = -1", "tenant_max_tokens = -5", "tenant = \"a b\""} {
		if _, err := config.Load(file(t, "[budget]\n"+bad+"\n")); err == nil || !strings.Contains(err.Error(), "budget.") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
