// Package config reads rein's settings from TOML files. Files are applied in
// order over the defaults, each overriding only the keys it sets; flags are
// applied last by the caller. Unknown keys are errors, so a typo never passes
// silently as "no setting".
package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/ledger"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/price"
	"github.com/reinhq/rein/protect"
)

// Config is rein's effective configuration.
type Config struct {
	Limits      Limits      `toml:"limits" json:"limits"`
	Tools       Tools       `toml:"tools" json:"tools"`
	Permissions Permissions `toml:"permissions" json:"permissions"`
	Network     Network     `toml:"network" json:"network"`
	Sandbox     Sandbox     `toml:"sandbox" json:"sandbox"`
	Audit       Audit       `toml:"audit" json:"audit"`
	Flow        Flow        `toml:"flow" json:"flow"`
	Protect     Protect     `toml:"protect" json:"protect"`
	MCP         MCP         `toml:"mcp" json:"mcp"`
	Model       Model       `toml:"model" json:"model"`
	// Approvals sends a run's questions to a running rein serve. Only the
	// user's own config or flags may set it: a project's may not (a
	// repository must not choose who approves its agent's calls).
	Approvals Approvals `toml:"approvals" json:"approvals"`
	// Telemetry exports OpenTelemetry traces of sessions (off by
	// default). Only the user's own config or flags may set it: a
	// project's may not (it would choose where the record of what the
	// agent did is sent).
	Telemetry Telemetry `toml:"telemetry" json:"telemetry"`
	// Budget caps every session's use together, per UTC day and per
	// tenant, in rein serve's ledger (package ledger); a project's config
	// may only lower a cap, and may not name the tenant.
	Budget Budget `toml:"budget" json:"budget"`
	// Prices are the models' prices, keyed "provider:model" (price.Defaults,
	// overridden per model by the files); look one up with Prices.Lookup.
	// Not recorded with the configuration: a session records the one price
	// it used.
	Prices price.Table `toml:"prices" json:"-"`
}

// Approvals is where rein run asks (rein run --approvals).
type Approvals struct {
	// URL is the base URL of a running rein serve; empty asks at the
	// terminal.
	URL string `toml:"url" json:"url,omitempty"`
	// TokenFile holds the server's bearer token (else $REIN_APPROVALS_TOKEN).
	TokenFile string `toml:"token_file" json:"token_file,omitempty"`
}

// Telemetry is where traces go (rein run --otlp-endpoint, docs/serve.md).
type Telemetry struct {
	// OTLPEndpoint is an OTLP/HTTP traces URL such as
	// http://localhost:4318/v1/traces; empty exports nothing.
	OTLPEndpoint string `toml:"otlp_endpoint" json:"otlp_endpoint,omitempty"`
	// Content adds the redacted text the audit log holds (task, model
	// text, arguments, results, answer) to the spans. Default false.
	Content bool `toml:"content" json:"content,omitempty"`
}

// Budget is [budget]: the caps of rein serve's ledger, which counts every
// model call of the sessions it hosts and of the runs that point at it
// (rein run --approvals URL). A zero cap is none.
type Budget struct {
	// DayMaxCostUSD and DayMaxTokens cap every session's use together in
	// one UTC day.
	DayMaxCostUSD float64 `toml:"day_max_cost_usd" json:"day_max_cost_usd,omitempty"`
	DayMaxTokens  int64   `toml:"day_max_tokens" json:"day_max_tokens,omitempty"`
	// TenantMaxCostUSD and TenantMaxTokens cap each tenant's use in one
	// UTC day.
	TenantMaxCostUSD float64 `toml:"tenant_max_cost_usd" json:"tenant_max_cost_usd,omitempty"`
	TenantMaxTokens  int64   `toml:"tenant_max_tokens" json:"tenant_max_tokens,omitempty"`
	// Tenant is the tenant rein run names to the server's ledger (default
	// "default"). Only the user's own config or flags may set it.
	Tenant string `toml:"tenant" json:"tenant,omitempty"`
}

// Caps returns the caps as the ledger takes them.
func (b Budget) Caps() ledger.Caps {
	return ledger.Caps{DayTokens: b.DayMaxTokens, DayCostUSD: b.DayMaxCostUSD, TenantTokens: b.TenantMaxTokens, TenantCostUSD: b.TenantMaxCostUSD}
}

// Model chooses the model when neither --model nor REIN_MODEL does.
type Model struct {
	// Default is "provider:name", like "anthropic:claude-sonnet-4-5".
	Default string `toml:"default" json:"default,omitempty"`
}

// Sandbox says where commands run.
type Sandbox struct {
	// Backend is auto (the strongest that works), landlock, docker or none.
	Backend string `toml:"backend" json:"backend"`
	// Image is the container image for docker; rein never pulls one.
	Image string `toml:"image" json:"image,omitempty"`
	// Runtime is "docker" or "podman".
	Runtime string `toml:"runtime" json:"runtime,omitempty"`
	// Memory bounds each command's memory ("2GiB", "512MiB", "none");
	// empty means the backend's default (2 GiB for landlock).
	Memory string `toml:"memory" json:"memory,omitempty"`
	// StageAskAbove is how many files one command may change or delete
	// (its writes are staged, then applied) before rein asks; 0 means 20.
	// A later file may only lower it.
	StageAskAbove int `toml:"stage_ask_above" json:"stage_ask_above,omitempty"`
	// Unstaged runs landlock commands without staging their writes: they
	// go straight to the work dir (visible while the command runs, as a
	// dev server's or a test harness's must be), and rollback cannot undo
	// them. Only the user's own config may set it; a project may not.
	Unstaged bool `toml:"unstaged" json:"unstaged,omitempty"`
	// Network is what commands may reach through rein's egress proxy.
	Network SandboxNetwork `toml:"network" json:"network"`
}

// SandboxNetwork is [sandbox.network]: the hosts sandboxed commands may
// reach through the egress proxy (package egress), and its limits. With
// Allow empty, commands have no network at all.
type SandboxNetwork struct {
	// Allow lists the hosts: "example.org" (ports 80 and 443),
	// "example.org:8443", "*.example.net" (every name below it),
	// "*.example.net:443".
	Allow []string `toml:"allow" json:"allow,omitempty"`
	// Internal lists internal hosts ("host" or "host:port", as
	// [network] allow) the proxy may reach: without an entry here, a host
	// on Allow that resolves to a loopback, private or link-local address
	// is refused.
	Internal []string `toml:"internal" json:"internal,omitempty"`
	// MaxConnections bounds the connections of a session through the
	// proxy; 0 means the default (egress.DefaultMaxConns).
	MaxConnections int `toml:"max_connections" json:"max_connections,omitempty"`
	// MaxBytes bounds the bytes a session moves through the proxy, both
	// ways ("1GiB", "none"); empty means the default (8 GiB).
	MaxBytes string `toml:"max_bytes" json:"max_bytes,omitempty"`
}

// Egress returns the proxy's settings ([sandbox.network]) checked and
// parsed: the allowlist, the internal hosts, and the limits in
// egress.Config's terms (0 the default, negative none).
func (n SandboxNetwork) Egress() (egress.Config, error) {
	if _, err := egress.ParseRules(n.Allow); err != nil {
		return egress.Config{}, err
	}
	if err := (&netguard.Policy{Allow: n.Internal}).Validate(); err != nil {
		return egress.Config{}, fmt.Errorf("sandbox.network.internal: %w", err)
	}
	if n.MaxConnections < 0 {
		return egress.Config{}, fmt.Errorf("sandbox.network.max_connections is %d: use a positive number, or 0 for the default", n.MaxConnections)
	}
	maxBytes, err := parseBytes(n.MaxBytes)
	if err != nil {
		return egress.Config{}, fmt.Errorf("sandbox.network.max_bytes: %w", err)
	}
	return egress.Config{
		Allow:    slices.Clone(n.Allow),
		Guard:    &netguard.Policy{Allow: slices.Clone(n.Internal)},
		MaxConns: n.MaxConnections,
		MaxBytes: maxBytes,
	}, nil
}

// Permissions are the permission mode and the user's rules.
type Permissions struct {
	// Mode is plan, default, accept-edits or bypass.
	Mode string `toml:"mode" json:"mode"`
	// Rules allow, ask about or deny calls by tool and pattern. Rules from
	// every file are kept, in the order the files are read.
	Rules []permission.Rule `toml:"rules" json:"rules"`
	// Unattended says nobody will answer (cron, CI): every question is No
	// at once, and only a task contract given with the task (rein run
	// --contract FILE) authorises side effects. Same as --unattended.
	Unattended bool `toml:"unattended" json:"unattended,omitempty"`
}

// Network configures webfetch's network gate.
type Network struct {
	// Allow lists internal hosts ("host" or "host:port") the user lets
	// webfetch reach; public hosts need no entry.
	Allow []string `toml:"allow" json:"allow"`
	// Domains, when set, are the only hosts webfetch may fetch from,
	// written as [sandbox.network] allow's entries ("example.org",
	// "*.example.net:443"); empty means any public host.
	Domains []string `toml:"domains" json:"domains,omitempty"`
}

// Flow configures the data-flow gate (gate/flow): what happens when a
// side-effecting call carries, in a sensitive argument, a value that came
// from a tool result and not from the user.
type Flow struct {
	// OnHit is "ask" (the default: a human must say yes, whatever the
	// permission mode; bypass mode refuses), "deny" or "off".
	OnHit string `toml:"on_hit" json:"on_hit"`
}

// Protect extends the protected paths (package protect): files whose
// content runs code later, outside the sandbox (git hooks and config,
// shell rc files, editor and agent config, ...). A write to one asks in
// every permission mode and is refused where nobody can answer. The
// built-in list always applies; files can only add to it.
type Protect struct {
	// Paths are more patterns to protect, relative and slash-separated,
	// matched at any depth and case-insensitively: "deploy/" (a directory
	// and everything in it), ".terraformrc" (a file), "*.service" (a glob
	// within one name). Every file's entries are kept, in order: a later
	// file, the project's included, adds to them and never removes one.
	Paths []string `toml:"paths" json:"paths,omitempty"`
}

// List returns the effective protected-path list: the built-in rules and
// the configured paths.
func (p Protect) List() *protect.List {
	extra := make([]protect.Rule, len(p.Paths))
	for i, pat := range p.Paths {
		extra[i] = protect.Rule{Pattern: pat, Why: "your config protects it (protect.paths): you said what it runs"}
	}
	return protect.Default().With(extra...)
}

// flowStrictness orders the flow.on_hit values, loosest first.
var flowStrictness = map[string]int{"off": 0, "ask": 1, "deny": 2}

// Limits cap a run (see budget.Limits).
type Limits struct {
	MaxSteps     int      `toml:"max_steps" json:"max_steps"`
	MaxToolCalls int      `toml:"max_tool_calls" json:"max_tool_calls"`
	MaxTokens    int64    `toml:"max_tokens" json:"max_tokens"`
	MaxCostUSD   float64  `toml:"max_cost_usd" json:"max_cost_usd"`
	Timeout      Duration `toml:"timeout" json:"timeout"`
}

// Budget returns the limits as the loop takes them.
func (l Limits) Budget() budget.Limits {
	return budget.Limits{MaxSteps: l.MaxSteps, MaxToolCalls: l.MaxToolCalls, MaxTokens: l.MaxTokens,
		MaxCostUSD: l.MaxCostUSD, MaxWall: time.Duration(l.Timeout)}
}

// Tools configures the tool set.
type Tools struct {
	// Allow is the session's allowlist: the tools the model may see and call.
	Allow []string `toml:"allow" json:"allow"`
	// ReadLines is how many lines read_file returns when the model gives no limit.
	ReadLines int `toml:"read_lines" json:"read_lines"`
	// Limits caps how many times a side-effecting tool may run per session
	// (irreversible tools default to 1).
	Limits map[string]int `toml:"limits" json:"limits,omitempty"`
}

// Audit configures the audit log.
type Audit struct {
	// Dir is where logs go; empty means $XDG_STATE_HOME/rein/audit.
	Dir string `toml:"dir" json:"dir"`
	// Durability is "fsync" (the default: before every side effect and at
	// the stop, every record so far is on disk, so after a power loss no
	// effect lacks its intent) or "flush" (handed to the OS: survives a
	// crash of rein, not of the machine; much faster).
	Durability string `toml:"durability" json:"durability"`
}

// Duration is a time.Duration written as "30m", "90s" or "1h30m".
type Duration time.Duration

// UnmarshalText parses a Go duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration: write it like 30m, 90s or 1h30m", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText renders the duration like "30m0s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// DefaultMaxCostUSD is the cost cap of `rein run` (USD): a priced model's
// session stops with stop reason budget once it has cost more.
const DefaultMaxCostUSD = 5

// Default returns the built-in configuration: the limits of `rein run`
// (40 steps, 200 tool calls, 200,000 tokens, 5 USD, 30 minutes), read-only
// tools allowed, audit logs flushed per record, the built-in price table.
func Default() Config {
	b := budget.Defaults()
	return Config{
		Limits: Limits{MaxSteps: b.MaxSteps, MaxToolCalls: b.MaxToolCalls, MaxTokens: b.MaxTokens,
			MaxCostUSD: DefaultMaxCostUSD, Timeout: Duration(b.MaxWall)},
		Prices:      price.Defaults(),
		Tools:       Tools{Allow: DefaultTools(), ReadLines: 2000},
		Permissions: Permissions{Mode: string(permission.Default)},
		Sandbox:     Sandbox{Backend: "auto"},
		Audit:       Audit{Durability: "fsync"},
		Flow:        Flow{OnHit: "ask"},
	}
}

// DefaultTools is the default allowlist: the work-dir tools, the shell, the
// web, planning and calc. What runs without a human is the permission
// mode's decision.
func DefaultTools() []string {
	return []string{"read_file", "glob", "grep", "write_file", "edit_file", "run_bash", "webfetch",
		"scratchpad_read", "scratchpad_write", "todo_append", "todo_list", "todo_update", "ask_question", "calc"}
}

// Validate checks values that TOML types alone cannot.
func (c Config) Validate() error {
	if err := c.Limits.Budget().Validate(); err != nil {
		return err
	}
	if c.Tools.ReadLines <= 0 || c.Tools.ReadLines > 2000 {
		return fmt.Errorf("tools.read_lines is %d: it must be between 1 and 2000", c.Tools.ReadLines)
	}
	for name, n := range c.Tools.Limits {
		if n <= 0 {
			return fmt.Errorf("tools.limits.%s is %d: a limit must be at least 1 (remove the tool from tools.allow to forbid it)", name, n)
		}
	}
	if _, err := permission.ParseMode(c.Permissions.Mode); err != nil {
		return fmt.Errorf("permissions.mode: %w", err)
	}
	switch c.Sandbox.Backend {
	case "auto", "landlock", "docker", "none":
	default:
		return fmt.Errorf("sandbox.backend is %q: use auto, landlock, docker or none", c.Sandbox.Backend)
	}
	switch c.Sandbox.Runtime {
	case "", "docker", "podman":
	default:
		return fmt.Errorf("sandbox.runtime is %q: use docker or podman", c.Sandbox.Runtime)
	}
	if _, err := c.Audit.Level(); err != nil {
		return err
	}
	if _, ok := flowStrictness[c.Flow.OnHit]; !ok {
		return fmt.Errorf("flow.on_hit is %q: use ask, deny or off", c.Flow.OnHit)
	}
	if _, err := c.Sandbox.Network.Egress(); err != nil {
		return err
	}
	if _, err := egress.ParseRules(c.Network.Domains); err != nil {
		return fmt.Errorf("network.domains: %w", err)
	}
	if err := (&netguard.Policy{Allow: c.Network.Allow}).Validate(); err != nil {
		return fmt.Errorf("network.allow: %w (write each entry as host or host:port, like \"intranet.local\" or \"127.0.0.1:8080\")", err)
	}
	for _, p := range c.Protect.Paths {
		if err := protect.Valid(protect.Rule{Pattern: p}); err != nil {
			return fmt.Errorf("protect.paths: %w", err)
		}
	}
	if err := validMCP(c.MCP); err != nil {
		return err
	}
	if err := c.Budget.Caps().Validate(); err != nil {
		return fmt.Errorf("budget.%w", err)
	}
	if c.Budget.Tenant != "" {
		if err := ledger.CheckTenant(c.Budget.Tenant); err != nil {
			return fmt.Errorf("budget.tenant: %w", err)
		}
	}
	return validPrices(c.Prices)
}

// tomlError is a decoder error in one line: the line and the message of a
// syntax error, without the decoder's own prefix.
func tomlError(err error) error {
	var perr toml.ParseError
	if errors.As(err, &perr) {
		return fmt.Errorf("line %d: %s", perr.Position.Line, perr.Message)
	}
	return err
}

// Level returns the audit durability.
func (a Audit) Level() (audit.Durability, error) {
	switch a.Durability {
	case "flush":
		return audit.Flush, nil
	case "fsync", "":
		return audit.Fsync, nil
	}
	return 0, fmt.Errorf("audit.durability is %q: use \"flush\" or \"fsync\"", a.Durability)
}

// durabilityStrictness orders the audit.durability values, loosest first.
var durabilityStrictness = map[string]int{"flush": 0, "fsync": 1, "": 1}

// Source is one configuration file to apply. A Required file that does not
// exist is an error; an optional one is skipped.
//
// A Narrow source (the project's .rein/config.toml, which comes with the
// repository and may have been written by anyone) can only take rights
// away: it may shorten the allowlist and the limits, make the mode
// stricter and add ask and deny rules and protected paths; it may not add
// tools, raise limits, loosen the mode, add allow rules, allow internal
// hosts, move the audit log or relax its durability, change prices or the
// sandbox. Every key the file sets is compared with the effective value
// (the built-in defaults and the files before it), and a key rein does not
// know how to judge is refused. Trying to widen is an error that names the
// key.
type Source struct {
	Path     string
	Required bool
	Narrow   bool
	// Caps, for a Narrow source, says a tool's built-in per-session cap
	// (what gate.Limit applies when no file sets one): capped false means
	// none. A Narrow source's tools.limits may not exceed it. Nil means
	// every tool is capped at 1, the strictest: a project may then only
	// set limits of 1 for tools no earlier file capped.
	Caps func(tool string) (limit int, capped bool)
}

// Load applies the sources over the defaults, in order.
func Load(sources ...Source) (Config, error) {
	c := Default()
	for _, s := range sources {
		if err := apply(&c, s); err != nil {
			return Config{}, err
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

func apply(c *Config, s Source) error {
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, os.ErrNotExist) && !s.Required {
		return nil
	}
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	// Decode into a copy, so a bad file changes nothing.
	next := *c
	next.Tools.Allow = slices.Clone(c.Tools.Allow)
	next.Tools.Limits = maps.Clone(c.Tools.Limits)
	next.Network.Allow = slices.Clone(c.Network.Allow)
	next.Network.Domains = slices.Clone(c.Network.Domains)
	next.Sandbox.Network.Allow = slices.Clone(c.Sandbox.Network.Allow)
	next.Sandbox.Network.Internal = slices.Clone(c.Sandbox.Network.Internal)
	next.Prices = maps.Clone(c.Prices)
	next.Permissions.Rules = nil // rules accumulate: decode this file's alone
	next.Protect.Paths = nil     // so do protected paths
	next.MCP = MCP{}             // servers are merged key by key below
	// First as plain TOML, for syntax errors with their line and for
	// values of the wrong type named by key (checkTypes), then into next.
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		return fmt.Errorf("config %s: %w", s.Path, tomlError(err))
	}
	if err := checkTypes(raw, reflect.TypeFor[Config](), ""); err != nil {
		return fmt.Errorf("config %s: %w", s.Path, err)
	}
	md, err := toml.Decode(string(data), &next)
	if err != nil {
		return fmt.Errorf("config %s: %w", s.Path, tomlError(err))
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return fmt.Errorf("config %s: unknown key %s (known: %s)", s.Path, strings.Join(keys, ", "), strings.Join(Keys(), ", "))
	}
	if err := checkPrices(next.Prices, md); err != nil {
		return fmt.Errorf("config %s: %w", s.Path, err)
	}
	next.MCP = mergeMCP(c.MCP, next.MCP, md)
	if err := validMCP(next.MCP); err != nil {
		return fmt.Errorf("config %s: %w", s.Path, err)
	}
	if s.Narrow {
		if err := narrows(c, &next, md, s.Caps); err != nil {
			return fmt.Errorf("config %s: %w (a project's config may only take rights away; widen them in your own config or with flags)", s.Path, err)
		}
	}
	next.Permissions.Rules = append(slices.Clone(c.Permissions.Rules), next.Permissions.Rules...)
	next.Protect.Paths = append(slices.Clone(c.Protect.Paths), next.Protect.Paths...)
	*c = next
	return nil
}

// parseBytes reads a byte count: "" (0: the default), "none" (-1), or a
// whole number with an optional unit, B, KiB, MiB, GiB, TiB (or K, M,
// G, T, meaning the same).
func parseBytes(v string) (int64, error) {
	s := strings.TrimSpace(v)
	switch strings.ToLower(s) {
	case "":
		return 0, nil
	case "none":
		return -1, nil
	}
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = strings.TrimSpace(rest), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%q is not a size: write a whole number with a unit, like \"512MiB\" or \"4GiB\", or \"none\"", v)
	}
	return n << shift, nil
}

// Keys lists every key a file may set, from Config's toml tags.
func Keys() []string { return keysOf(reflect.TypeFor[Config](), "") }

func keysOf(t reflect.Type, prefix string) []string {
	var keys []string
	for f := range t.Fields() {
		name := prefix + f.Tag.Get("toml")
		if f.Type.Kind() == reflect.Struct {
			keys = append(keys, keysOf(f.Type, name+".")...)
			continue
		}
		keys = append(keys, name)
	}
	return keys
}

// UserFile is the user's configuration file: $XDG_CONFIG_HOME/rein/config.toml
// or ~/.config/rein/config.toml. It returns "" when there is no home.
func UserFile() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "rein", "config.toml")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "rein", "config.toml")
}

// ProjectFile is a project's configuration file under its work directory.
func ProjectFile(workdir string) string { return filepath.Join(workdir, ".rein", "config.toml") }
