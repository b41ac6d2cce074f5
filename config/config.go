// Package config reads rein's settings from TOML files. Files are applied in
// order over the defaults, each overriding only the keys it sets; flags are
// applied last by the caller. Unknown keys are errors, so a typo never passes
// silently as "no setting".
package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate/permission"
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
	// Prices are the models' prices, keyed "provider:model" (DefaultPrices,
	// overridden per model by the files). Not recorded with the
	// configuration: a session records the one price it used.
	Prices map[string]Price `toml:"prices" json:"-"`
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
}

// Permissions are the permission mode and the user's rules.
type Permissions struct {
	// Mode is plan, default, accept-edits or bypass.
	Mode string `toml:"mode" json:"mode"`
	// Rules allow, ask about or deny calls by tool and pattern. Rules from
	// every file are kept, in the order the files are read.
	Rules []permission.Rule `toml:"rules" json:"rules"`
}

// Network configures webfetch's network gate.
type Network struct {
	// Allow lists internal hosts ("host" or "host:port") the user lets
	// webfetch reach; public hosts need no entry.
	Allow []string `toml:"allow" json:"allow"`
}

// Flow configures the data-flow gate (gate/flow): what happens when a
// side-effecting call carries, in a sensitive argument, a value that came
// from a tool result and not from the user.
type Flow struct {
	// OnHit is "ask" (the default: a human must say yes, whatever the
	// permission mode; bypass mode refuses), "deny" or "off".
	OnHit string `toml:"on_hit" json:"on_hit"`
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
	// Durability is "fsync" (the default: every record is on disk before
	// the next step, so after a crash at any moment every line is complete)
	// or "flush" (handed to the OS: survives a crash of rein, not of the
	// machine; much faster).
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
		Prices:      DefaultPrices(),
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
	return validPrices(c.Prices)
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

// Source is one configuration file to apply. A Required file that does not
// exist is an error; an optional one is skipped.
//
// A Narrow source (the project's .rein/config.toml, which comes with the
// repository and may have been written by anyone) can only take rights
// away: it may shorten the allowlist and the limits, make the mode
// stricter and add ask and deny rules; it may not add tools, raise limits,
// loosen the mode, add allow rules, allow internal hosts or move the audit
// log. Trying to is an error that names the key.
type Source struct {
	Path     string
	Required bool
	Narrow   bool
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
	next.Prices = maps.Clone(c.Prices)
	next.Permissions.Rules = nil // rules accumulate: decode this file's alone
	md, err := toml.Decode(string(data), &next)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return fmt.Errorf("config %s: line %d: %s", s.Path, perr.Position.Line, perr.Message)
		}
		return fmt.Errorf("config %s: %w", s.Path, err)
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
	if s.Narrow {
		if err := narrows(c, &next, md); err != nil {
			return fmt.Errorf("config %s: %w (a project's config may only take rights away; widen them in your own config or with flags)", s.Path, err)
		}
	}
	next.Permissions.Rules = append(slices.Clone(c.Permissions.Rules), next.Permissions.Rules...)
	*c = next
	return nil
}

// narrows checks that next takes no right that prev did not give.
func narrows(prev, next *Config, md toml.MetaData) error {
	for _, t := range next.Tools.Allow {
		if !slices.Contains(prev.Tools.Allow, t) {
			return fmt.Errorf("tools.allow adds %q", t)
		}
	}
	for name, n := range next.Tools.Limits {
		if old, ok := prev.Tools.Limits[name]; ok && n > old {
			return fmt.Errorf("tools.limits.%s raises the limit from %d to %d", name, old, n)
		}
	}
	type num struct {
		key      string
		was, now float64
	}
	for _, n := range []num{
		{"limits.max_steps", float64(prev.Limits.MaxSteps), float64(next.Limits.MaxSteps)},
		{"limits.max_tool_calls", float64(prev.Limits.MaxToolCalls), float64(next.Limits.MaxToolCalls)},
		{"limits.max_tokens", float64(prev.Limits.MaxTokens), float64(next.Limits.MaxTokens)},
		{"limits.max_cost_usd", prev.Limits.MaxCostUSD, next.Limits.MaxCostUSD},
		{"limits.timeout", float64(prev.Limits.Timeout), float64(next.Limits.Timeout)},
	} {
		// 0 means "no cap": lifting a cap to 0 widens too.
		if n.was > 0 && (n.now > n.was || n.now <= 0) {
			return fmt.Errorf("%s raises the limit", n.key)
		}
	}
	if next.Permissions.Mode != prev.Permissions.Mode {
		pm, _ := permission.ParseMode(prev.Permissions.Mode)
		nm, err := permission.ParseMode(next.Permissions.Mode)
		if err != nil {
			return fmt.Errorf("permissions.mode: %w", err)
		}
		if nm.Looser(pm) {
			return fmt.Errorf("permissions.mode %q is looser than %q", nm, pm)
		}
	}
	for i, r := range next.Permissions.Rules {
		if r.Decision == "allow" {
			return fmt.Errorf("permissions.rules[%d] is an allow rule", i)
		}
	}
	for _, h := range next.Network.Allow {
		if !slices.Contains(prev.Network.Allow, h) {
			return fmt.Errorf("network.allow adds %q", h)
		}
	}
	if was, now := flowStrictness[prev.Flow.OnHit], flowStrictness[next.Flow.OnHit]; next.Flow.OnHit != prev.Flow.OnHit && now < was {
		return fmt.Errorf("flow.on_hit %q is looser than %q", next.Flow.OnHit, prev.Flow.OnHit)
	}
	if md.IsDefined("audit", "dir") {
		return errors.New("audit.dir moves the audit log")
	}
	if md.IsDefined("prices") {
		return errors.New("prices change what the cost cap counts")
	}
	if next.Sandbox.Backend != prev.Sandbox.Backend && (next.Sandbox.Backend == "none" || prev.Sandbox.Backend == "none" || next.Sandbox.Backend == "auto") {
		return fmt.Errorf("sandbox.backend %q may weaken the sandbox", next.Sandbox.Backend)
	}
	if md.IsDefined("sandbox", "image") || md.IsDefined("sandbox", "runtime") {
		return errors.New("sandbox.image and sandbox.runtime choose what commands run in")
	}
	if md.IsDefined("sandbox", "memory") {
		return errors.New("sandbox.memory sets the commands' memory limit")
	}
	return nil
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
