package config_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/price"
)

// file writes content to a new file and returns it as an optional source.
func file(t *testing.T, content string) config.Source {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return config.Source{Path: path}
}

func TestDefault(t *testing.T) {
	t.Parallel()
	c := config.Default()
	want := config.Config{
		Limits: config.Limits{MaxSteps: 40, MaxToolCalls: 200, MaxTokens: 200_000, MaxCostUSD: 5,
			Timeout: config.Duration(30 * time.Minute)},
		Tools:       config.Tools{Allow: config.DefaultTools(), ReadLines: 2000},
		Permissions: config.Permissions{Mode: "default"},
		Sandbox:     config.Sandbox{Backend: "auto"},
		Audit:       config.Audit{Dir: "", Durability: "fsync"},
		Flow:        config.Flow{OnHit: "ask"},
		Prices:      price.Defaults(),
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Default() = %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
	if lvl, err := c.Audit.Level(); err != nil || lvl != audit.Fsync {
		t.Errorf("Default().Audit.Level() = %v, %v; want Fsync", lvl, err)
	}
	b := c.Limits.Budget()
	if b.MaxSteps != 40 || b.MaxToolCalls != 200 || b.MaxTokens != 200_000 || b.MaxWall != 30*time.Minute {
		t.Errorf("Default().Limits.Budget() = %+v", b)
	}
	// Each call returns its own slice.
	c.Tools.Allow[0] = "changed"
	if got := config.Default().Tools.Allow[0]; got != "read_file" {
		t.Errorf("changing one Default() changed the next: Allow[0] = %q", got)
	}
}

func TestLoadNoFiles(t *testing.T) {
	t.Parallel()
	c, err := config.Load()
	if err != nil || !reflect.DeepEqual(c, config.Default()) {
		t.Errorf("Load() = %+v, %v; want the defaults", c, err)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files []string
		edit  func(*config.Config) // applied to the defaults to get the expected result
	}{
		{"empty file", []string{""}, func(*config.Config) {}},
		{"comments only", []string{"# nothing\n\n"}, func(*config.Config) {}},
		{"one key", []string{"[limits]\nmax_steps = 10\n"}, func(c *config.Config) { c.Limits.MaxSteps = 10 }},
		{"dotted key", []string{"limits.max_tokens = 5000\n"}, func(c *config.Config) { c.Limits.MaxTokens = 5000 }},
		{"none means no cap", []string{"[limits]\nmax_steps = \"none\"\nmax_tool_calls = \"none\"\nmax_tokens = \"none\"\nmax_cost_usd = \"none\"\ntimeout = \"none\"\n"},
			func(c *config.Config) { c.Limits = config.Limits{} }},
		{"every key", []string{`
[limits]
max_steps = 5
max_tool_calls = 6
max_tokens = 7
max_cost_usd = 1.25
timeout = "1h30m"

[tools]
allow = ["send_email"]
read_lines = 100

[audit]
dir = "/var/log/rein"
durability = "fsync"
`}, func(c *config.Config) {
			c.Limits = config.Limits{MaxSteps: 5, MaxToolCalls: 6, MaxTokens: 7, MaxCostUSD: 1.25,
				Timeout: config.Duration(90 * time.Minute)}
			c.Tools = config.Tools{Allow: []string{"send_email"}, ReadLines: 100}
			c.Audit = config.Audit{Dir: "/var/log/rein", Durability: "fsync"}
		}},
		{"allow replaced, not merged", []string{"[tools]\nallow = [\"calc\"]\n"},
			func(c *config.Config) { c.Tools.Allow = []string{"calc"} }},
		{"allow emptied", []string{"[tools]\nallow = []\n"},
			func(c *config.Config) { c.Tools.Allow = []string{} }},
		{"later file wins", []string{
			"[limits]\nmax_steps = 10\nmax_tool_calls = 11\n",
			"[limits]\nmax_steps = 20\n",
		}, func(c *config.Config) { c.Limits.MaxSteps = 20; c.Limits.MaxToolCalls = 11 }},
		{"files set different sections", []string{
			"[tools]\nread_lines = 50\n",
			"[audit]\ndurability = \"fsync\"\n",
		}, func(c *config.Config) { c.Tools.ReadLines = 50; c.Audit.Durability = "fsync" }},
		{"later allow replaces earlier", []string{
			"[tools]\nallow = [\"a\", \"b\", \"c\"]\n",
			"[tools]\nallow = [\"d\"]\n",
		}, func(c *config.Config) { c.Tools.Allow = []string{"d"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var sources []config.Source
			for _, f := range tt.files {
				sources = append(sources, file(t, f))
			}
			got, err := config.Load(sources...)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := config.Default()
			tt.edit(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Load =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestMissingFiles(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nope", "config.toml")
	c, err := config.Load(config.Source{Path: missing}, file(t, "[limits]\nmax_steps = 3\n"))
	if err != nil || c.Limits.MaxSteps != 3 {
		t.Errorf("Load with an optional missing file = %+v, %v; want it skipped", c.Limits, err)
	}
	_, err = config.Load(config.Source{Path: missing, Required: true})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load with a required missing file = %v; want a not-exist error naming %s", err, missing)
	}
	// A directory is not skipped even when optional.
	if _, err := config.Load(config.Source{Path: t.TempDir()}); err == nil {
		t.Error("Load of a directory = nil, want an error")
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    []string // substrings of the message
	}{
		{"unknown key", "[limits]\nmax_stepz = 3\n",
			[]string{"unknown key limits.max_stepz", "known: limits.max_steps, limits.max_tool_calls"}},
		{"unknown section", "[limitz]\nmax_steps = 3\n", []string{"unknown key limitz", "known:"}},
		{"unknown top-level key", "verbose = true\n", []string{"unknown key verbose"}},
		{"syntax error line 3", "[limits]\nmax_steps = 3\nmax_tokens = = 4\n", []string{"line 3:"}},
		{"unterminated string line 2", "[audit]\ndir = \"oops\n", []string{"line 2:"}},
		{"missing equals line 2", "[limits]\nmax_steps 3\n", []string{"line 2:"}},
		{"bad duration", "[limits]\ntimeout = \"30 minutes\"\n",
			[]string{`limits.timeout is "30 minutes"`, `like "30m" or "1h30m", or "none" for no cap`}},
		{"duration as number", "[limits]\ntimeout = 30\n", []string{`limits.timeout is an integer: write a positive duration`}},
		{"wrong type", "[limits]\nmax_steps = \"forty\"\n", []string{`limits.max_steps is "forty": write a positive whole number, or "none" for no cap`}},
		{"negative max_steps", "[limits]\nmax_steps = -1\n", []string{"limits.max_steps is -1: write a positive whole number"}},
		{"negative max_tokens", "[limits]\nmax_tokens = -5\n", []string{"limits.max_tokens is -5"}},
		{"negative cost", "[limits]\nmax_cost_usd = -0.5\n", []string{"limits.max_cost_usd is -0.5: write a positive amount"}},
		{"NaN cost", "[limits]\nmax_cost_usd = nan\n", []string{"limits.max_cost_usd is NaN"}},
		{"negative timeout", "[limits]\ntimeout = \"-1m\"\n", []string{`limits.timeout is "-1m"`}},
		// 0 is not "no cap": that is spelled "none".
		{"zero max_steps", "[limits]\nmax_steps = 0\n", []string{`limits.max_steps is 0: write a positive whole number, or "none" for no cap`}},
		{"zero max_tool_calls", "[limits]\nmax_tool_calls = 0\n", []string{"limits.max_tool_calls is 0"}},
		{"zero max_tokens", "[limits]\nmax_tokens = 0\n", []string{"limits.max_tokens is 0"}},
		{"zero cost", "[limits]\nmax_cost_usd = 0\n", []string{"limits.max_cost_usd is 0"}},
		{"zero timeout", "[limits]\ntimeout = \"0s\"\n", []string{`limits.timeout is "0s"`}},
		{"none misspelled", "[limits]\nmax_steps = \"None\"\n", []string{`limits.max_steps is "None"`}},
		// A value of the wrong type names the file's key and the type wanted,
		// not the decoder's internals.
		{"string for an integer", "[tools]\nread_lines = \"many\"\n", []string{"tools.read_lines is a string; it must be a whole number"}},
		{"integer for a string", "[sandbox]\nbackend = 3\n", []string{"sandbox.backend is an integer; it must be a string"}},
		{"string for a list", "[tools]\nallow = \"calc\"\n", []string{"tools.allow is a string; it must be a list"}},
		{"list item", "[network]\nallow = [\"a\", 3]\n", []string{"network.allow[1] is an integer; it must be a string"}},
		{"table value", "[tools.limits]\nsend_email = \"two\"\n", []string{"tools.limits.send_email is a string; it must be a whole number"}},
		{"section not a table", "limits = 3\n", []string{"limits must be a table"}},
		{"read_lines 0", "[tools]\nread_lines = 0\n", []string{"tools.read_lines is 0", "between 1 and 2000"}},
		{"read_lines too many", "[tools]\nread_lines = 2001\n", []string{"tools.read_lines is 2001"}},
		{"limit 0", "[tools.limits]\nsend_email = 0\n", []string{"tools.limits.send_email is 0", "remove the tool"}},
		{"bad mode", "[permissions]\nmode = \"yolo\"\n", []string{"permissions.mode", `unknown mode "yolo"`}},
		{"durability sometimes", "[audit]\ndurability = \"sometimes\"\n",
			[]string{`audit.durability is "sometimes"`, `"flush" or "fsync"`}},
		{"flow on_hit allow", "[flow]\non_hit = \"allow\"\n", []string{`flow.on_hit is "allow"`, "ask, deny or off"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := file(t, tt.content)
			c, err := config.Load(src)
			if err == nil {
				t.Fatalf("Load(%q) = %+v, want an error", tt.content, c)
			}
			if !reflect.DeepEqual(c, config.Config{}) {
				t.Errorf("Load(%q) returned %+v with its error, want the zero Config", tt.content, c)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Load(%q) = %q, want it to contain %q", tt.content, msg, w)
				}
			}
			if !strings.HasPrefix(msg, "config") {
				t.Errorf("Load(%q) = %q, want it to start with \"config\"", tt.content, msg)
			}
		})
	}
}

func TestUnknownKeyListsAllKeys(t *testing.T) {
	t.Parallel()
	_, err := config.Load(file(t, "[limits]\nmax_stepz = 3\n"))
	if err == nil {
		t.Fatal("Load = nil, want an error")
	}
	_, known, ok := strings.Cut(err.Error(), "(known: ")
	if !ok {
		t.Fatalf("error %q does not list the known keys", err)
	}
	want := strings.Join(config.Keys(), ", ") + ")"
	if known != want {
		t.Errorf("known keys = %q, want %q", known, want)
	}
}

// TestBadFileChangesNothing checks that a bad file leaves no trace: not in
// what Load returns, not in the defaults, not in a later Load.
func TestBadFileChangesNothing(t *testing.T) {
	t.Parallel()
	good := file(t, "[tools]\nallow = [\"calc\"]\nread_lines = 10\n")
	bads := []string{
		"[tools]\nallow = [\"send_email\"]\nread_lines = 0\n",        // decodes, then fails Validate
		"[tools]\nallow = [\"send_email\"]\nbogus = 1\n",             // decodes, then an unknown key
		"[tools]\nallow = [\"send_email\"]\n[limits]\nmax_steps = x", // a syntax error after a good part
	}
	for _, b := range bads {
		if _, err := config.Load(good, file(t, b)); err == nil {
			t.Fatalf("Load(good, %q) = nil, want an error", b)
		}
		c, err := config.Load(good)
		if err != nil {
			t.Fatalf("Load(good) after a bad load: %v", err)
		}
		if !slices.Equal(c.Tools.Allow, []string{"calc"}) || c.Tools.ReadLines != 10 {
			t.Errorf("Load(good) after a bad load = %+v", c.Tools)
		}
		if !reflect.DeepEqual(config.Default().Tools.Allow, config.DefaultTools()) {
			t.Errorf("the defaults changed after a bad load: %v", config.Default().Tools.Allow)
		}
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	want := []string{
		"limits.max_steps", "limits.max_tool_calls", "limits.max_tokens", "limits.max_cost_usd", "limits.timeout",
		"tools.allow", "tools.read_lines", "tools.limits",
		"permissions.mode", "permissions.rules", "permissions.unattended", "network.allow", "network.domains",
		"sandbox.backend", "sandbox.image", "sandbox.runtime", "sandbox.memory", "sandbox.stage_ask_above", "sandbox.unstaged",
		"sandbox.network.allow", "sandbox.network.internal", "sandbox.network.max_connections", "sandbox.network.max_bytes",
		"audit.dir", "audit.durability", "flow.on_hit", "protect.paths", "mcp.servers", "model.default",
		"approvals.url", "approvals.token_file", "telemetry.otlp_endpoint", "telemetry.content",
		"budget.day_max_cost_usd", "budget.day_max_tokens", "budget.tenant_max_cost_usd", "budget.tenant_max_tokens", "budget.tenant", "prices",
	}
	if got := config.Keys(); !slices.Equal(got, want) {
		t.Errorf("Keys() = %q, want %q", got, want)
	}
	// Every key is accepted by Load.
	var b strings.Builder
	values := map[string]string{
		"limits.timeout": `"1m"`, "tools.allow": `["calc"]`, "audit.dir": `"/tmp/x"`,
		"audit.durability": `"fsync"`, "limits.max_cost_usd": "1.5",
		"tools.limits": "{ send_email = 2 }", "permissions.mode": `"plan"`,
		"permissions.rules": `[{ tool = "run_bash", decision = "deny", command = "git push" }]`, "permissions.unattended": "true",
		"network.allow":   `["intranet.example:8080"]`,
		"sandbox.backend": `"landlock"`, "sandbox.image": `"img"`, "sandbox.runtime": `"podman"`,
		"sandbox.memory": `"1GiB"`, "sandbox.stage_ask_above": "5", "sandbox.unstaged": "true", "flow.on_hit": `"deny"`, "protect.paths": `["deploy/"]`,
		"mcp.servers": `{ srv = { command = "srv" } }`,
		"prices":      "{}", "model.default": `"scripted:x.json"`, "budget.tenant": `"acme"`, "budget.day_max_cost_usd": "2.5", "budget.tenant_max_cost_usd": "1.5",
		"network.domains": `["docs.example.org"]`, "sandbox.network.allow": `["example.org", "*.example.net:443"]`,
		"sandbox.network.internal": `["registry.corp:5000"]`, "sandbox.network.max_bytes": `"1GiB"`,
		"approvals.url": `"http://127.0.0.1:7878"`, "approvals.token_file": `"/tmp/t"`,
		"telemetry.otlp_endpoint": `"http://127.0.0.1:4318/v1/traces"`, "telemetry.content": "true",
	}
	for _, k := range want {
		v, ok := values[k]
		if !ok {
			v = "3"
		}
		b.WriteString(k + " = " + v + "\n")
	}
	if _, err := config.Load(file(t, b.String())); err != nil {
		t.Errorf("Load of every key:\n%s\n%v", b.String(), err)
	}
}

func TestAuditLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		durability string
		want       audit.Durability
		ok         bool
	}{
		{"flush", audit.Flush, true},
		{"", audit.Fsync, true},
		{"fsync", audit.Fsync, true},
		{"FSYNC", 0, false},
		{"sometimes", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.durability, func(t *testing.T) {
			t.Parallel()
			got, err := config.Audit{Durability: tt.durability}.Level()
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("Level(%q) = %v, %v; want %v, ok=%v", tt.durability, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestDurationText(t *testing.T) {
	t.Parallel()
	var d config.Duration
	if err := d.UnmarshalText([]byte("1h30m")); err != nil || time.Duration(d) != 90*time.Minute {
		t.Errorf("UnmarshalText(1h30m) = %v, %v", time.Duration(d), err)
	}
	if err := d.UnmarshalText([]byte("soon")); err == nil {
		t.Error("UnmarshalText(soon) = nil, want an error")
	} else if time.Duration(d) != 90*time.Minute {
		t.Errorf("a failed UnmarshalText changed the value to %v", time.Duration(d))
	}
	got, err := json.Marshal(config.Default().Limits)
	if err != nil || !strings.Contains(string(got), `"timeout":"30m0s"`) {
		t.Errorf("json of the default limits = %s, %v; want timeout 30m0s", got, err)
	}
}

func TestProjectFile(t *testing.T) {
	t.Parallel()
	if got, want := config.ProjectFile("/w"), filepath.Join("/w", ".rein", "config.toml"); got != want {
		t.Errorf("ProjectFile(/w) = %q, want %q", got, want)
	}
}

// t.Setenv cannot run in parallel tests, so these subtests are sequential.
func TestUserFile(t *testing.T) {
	home := t.TempDir()
	xdg := t.TempDir()
	tests := []struct {
		name      string
		xdg, home string
		want      string
	}{
		{"absolute XDG_CONFIG_HOME", xdg, home, filepath.Join(xdg, "rein", "config.toml")},
		{"relative XDG_CONFIG_HOME ignored", "relative/dir", home, filepath.Join(home, ".config", "rein", "config.toml")},
		{"dot XDG_CONFIG_HOME ignored", ".", home, filepath.Join(home, ".config", "rein", "config.toml")},
		{"empty XDG_CONFIG_HOME", "", home, filepath.Join(home, ".config", "rein", "config.toml")},
		{"no home", "", "", ""},
		{"absolute XDG_CONFIG_HOME without a home", xdg, "", filepath.Join(xdg, "rein", "config.toml")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", tt.xdg)
			t.Setenv("HOME", tt.home)
			if got := config.UserFile(); got != tt.want {
				t.Errorf("UserFile() with XDG_CONFIG_HOME=%q HOME=%q = %q, want %q", tt.xdg, tt.home, got, tt.want)
			}
		})
	}
}

// A project's config comes with the repository: it may take rights away,
// never add them.
func TestNarrowSource(t *testing.T) {
	t.Parallel()
	user := file(t, `
[limits]
max_steps = 20
[tools]
allow = ["read_file", "run_bash", "calc"]
[tools.limits]
send_email = 2
[permissions]
mode = "accept-edits"
[[permissions.rules]]
tool = "run_bash"
decision = "allow"
command = "go test"
[network]
allow = ["intranet.example"]
`)
	narrow := func(content string) config.Source {
		s := file(t, content)
		s.Narrow = true
		return s
	}
	// What a project may do.
	c, err := config.Load(user, narrow(`
[limits]
max_steps = 10
[tools]
allow = ["read_file"]
[tools.limits]
send_email = 1
[permissions]
mode = "plan"
[[permissions.rules]]
tool = "run_bash"
decision = "deny"
command = "git push"
[network]
allow = []
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MaxSteps != 10 || !slices.Equal(c.Tools.Allow, []string{"read_file"}) || c.Permissions.Mode != "plan" ||
		len(c.Permissions.Rules) != 2 || c.Permissions.Rules[1].Decision != "deny" || c.Tools.Limits["send_email"] != 1 {
		t.Fatalf("%+v", c)
	}
	// What it may not.
	for _, bad := range []struct{ content, want string }{
		{"[tools]\nallow = [\"read_file\", \"webfetch\"]\n", `tools.allow adds "webfetch"`},
		{"[limits]\nmax_steps = 50\n", "limits.max_steps raises"},
		{"[limits]\nmax_steps = \"none\"\n", "limits.max_steps raises"},
		{"[tools.limits]\nsend_email = 5\n", "tools.limits.send_email raises"},
		{"[permissions]\nmode = \"bypass\"\n", `"bypass" is looser`},
		{"[[permissions.rules]]\ntool = \"run_bash\"\ndecision = \"allow\"\ncommand = \"curl\"\n", "allow rule"},
		{"[[permissions.rules]]\ntool = \"run_bash\"\ndecision = \"Allow\"\ncommand = \"curl\"\n", `decision "Allow"`},
		{"[[permissions.rules]]\ntool = \"run_bash\"\ndecision = \"permit\"\ncommand = \"curl\"\n", `decision "permit"`},
		{"[network]\nallow = [\"169.254.169.254\"]\n", `network.allow adds "169.254.169.254"`},
		{"[audit]\ndir = \"/tmp/x\"\n", "audit.dir"},
		{"[sandbox]\nbackend = \"none\"\n", `sandbox.backend "none"`},
		{"[sandbox]\nimage = \"evil:latest\"\n", "sandbox.image"},
		{"[flow]\non_hit = \"off\"\n", `flow.on_hit "off" is looser than "ask"`},
	} {
		_, err := config.Load(user, narrow(bad.content))
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "only take rights away") {
			t.Errorf("%q: %v, want an error containing %q", bad.content, err, bad.want)
		}
	}
	// A project may make the data-flow gate stricter, not looser.
	if c, err := config.Load(user, narrow("[flow]\non_hit = \"deny\"\n")); err != nil || c.Flow.OnHit != "deny" {
		t.Errorf("flow.on_hit deny from a project: %v %v", c.Flow, err)
	}
	if _, err := config.Load(file(t, "[flow]\non_hit = \"deny\"\n"), narrow("[flow]\non_hit = \"ask\"\n")); err == nil {
		t.Error("a project loosened flow.on_hit from deny to ask")
	}
	// The same file as a trusted source widens as asked.
	if c, err := config.Load(user, file(t, "[tools]\nallow = [\"webfetch\"]\n")); err != nil || c.Tools.Allow[0] != "webfetch" {
		t.Errorf("%v %v", c.Tools.Allow, err)
	}
}
