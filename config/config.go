// Package config reads rein's settings from TOML files. Files are applied in
// order over the defaults, each overriding only the keys it sets; flags are
// applied last by the caller. Unknown keys are errors, so a typo never passes
// silently as "no setting".
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/budget"
)

// Config is rein's effective configuration.
type Config struct {
	Limits Limits `toml:"limits" json:"limits"`
	Tools  Tools  `toml:"tools" json:"tools"`
	Audit  Audit  `toml:"audit" json:"audit"`
}

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
	// ReadChunk is how many characters read_file hands out per call.
	ReadChunk int `toml:"read_chunk" json:"read_chunk"`
}

// Audit configures the audit log.
type Audit struct {
	// Dir is where logs go; empty means $XDG_STATE_HOME/rein/audit.
	Dir string `toml:"dir" json:"dir"`
	// Durability is "flush" (survives a crash of rein) or "fsync"
	// (survives a power loss, slower).
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

// Default returns the built-in configuration: the limits of `rein run`
// (40 steps, 200 tool calls, 200,000 tokens, 30 minutes), read-only tools
// allowed, audit logs flushed per record.
func Default() Config {
	b := budget.Defaults()
	return Config{
		Limits: Limits{MaxSteps: b.MaxSteps, MaxToolCalls: b.MaxToolCalls, MaxTokens: b.MaxTokens,
			MaxCostUSD: b.MaxCostUSD, Timeout: Duration(b.MaxWall)},
		Tools: Tools{Allow: []string{"read_file", "calc"}, ReadChunk: 8000},
		Audit: Audit{Durability: "flush"},
	}
}

// Validate checks values that TOML types alone cannot.
func (c Config) Validate() error {
	if err := c.Limits.Budget().Validate(); err != nil {
		return err
	}
	if c.Tools.ReadChunk <= 0 {
		return fmt.Errorf("tools.read_chunk is %d: it must be a positive number of characters", c.Tools.ReadChunk)
	}
	if _, err := c.Audit.Level(); err != nil {
		return err
	}
	return nil
}

// Level returns the audit durability.
func (a Audit) Level() (audit.Durability, error) {
	switch a.Durability {
	case "flush", "":
		return audit.Flush, nil
	case "fsync":
		return audit.Fsync, nil
	}
	return 0, fmt.Errorf("audit.durability is %q: use \"flush\" or \"fsync\"", a.Durability)
}

// Source is one configuration file to apply. A Required file that does not
// exist is an error; an optional one is skipped.
type Source struct {
	Path     string
	Required bool
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
	next.Tools.Allow = append([]string(nil), c.Tools.Allow...)
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
	*c = next
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
