package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/sandbox"
)

// narrows checks that next takes no right that prev, the effective
// configuration so far (built-in defaults included), did not give. Every
// key the file sets is judged; one rein has no rule for is refused, so a
// key added later is closed to projects until someone says how it narrows.
func narrows(prev, next *Config, md toml.MetaData, caps func(string) (int, bool)) error {
	if caps == nil {
		caps = func(string) (int, bool) { return 1, true }
	}
	for _, key := range md.Keys() {
		if err := narrowKey(key, prev, next, caps); err != nil {
			return err
		}
	}
	return nil
}

// narrowKey judges one key a Narrow file set.
func narrowKey(key toml.Key, prev, next *Config, caps func(string) (int, bool)) error {
	raise := func(name string, was, now float64) error {
		// 0 means "no cap": lifting a cap to 0 widens too.
		if was > 0 && (now > was || now <= 0) {
			return fmt.Errorf("%s raises the limit", name)
		}
		return nil
	}
	k := key.String()
	switch {
	case len(key) == 1:
		switch k {
		case "limits", "tools", "permissions", "network", "sandbox", "audit", "flow", "protect", "mcp", "model", "budget":
			return nil // a table: its keys are judged one by one
		case "prices":
			return errors.New("prices change what the cost cap counts")
		case "approvals":
			return errors.New("approvals choose who approves the agent's calls")
		case "telemetry":
			return errors.New("telemetry chooses where the record of the agent's actions is sent")
		}
	case key[0] == "approvals":
		return fmt.Errorf("%s chooses who approves the agent's calls", k)
	case key[0] == "telemetry":
		return fmt.Errorf("%s chooses where the record of the agent's actions is sent", k)
	case key[0] == "mcp":
		return narrowMCP(key, prev, next)
	case k == "budget.day_max_cost_usd":
		return raise(k, prev.Budget.DayMaxCostUSD, next.Budget.DayMaxCostUSD)
	case k == "budget.day_max_tokens":
		return raise(k, float64(prev.Budget.DayMaxTokens), float64(next.Budget.DayMaxTokens))
	case k == "budget.tenant_max_cost_usd":
		return raise(k, prev.Budget.TenantMaxCostUSD, next.Budget.TenantMaxCostUSD)
	case k == "budget.tenant_max_tokens":
		return raise(k, float64(prev.Budget.TenantMaxTokens), float64(next.Budget.TenantMaxTokens))
	case k == "budget.tenant":
		return errors.New("budget.tenant chooses whose budget the agent spends")
	case k == "limits.max_steps":
		return raise(k, float64(prev.Limits.MaxSteps), float64(next.Limits.MaxSteps))
	case k == "limits.max_tool_calls":
		return raise(k, float64(prev.Limits.MaxToolCalls), float64(next.Limits.MaxToolCalls))
	case k == "limits.max_tokens":
		return raise(k, float64(prev.Limits.MaxTokens), float64(next.Limits.MaxTokens))
	case k == "limits.max_cost_usd":
		return raise(k, prev.Limits.MaxCostUSD, next.Limits.MaxCostUSD)
	case k == "limits.timeout":
		return raise(k, float64(prev.Limits.Timeout), float64(next.Limits.Timeout))
	case k == "tools.allow":
		for _, t := range next.Tools.Allow {
			if !slices.Contains(prev.Tools.Allow, t) {
				return fmt.Errorf("tools.allow adds %q", t)
			}
		}
		return nil
	case k == "tools.read_lines":
		return nil // how much of a file one read shows, bounded by Validate: no right
	case k == "tools.limits":
		return nil // a table: each tool's limit is judged
	case len(key) == 3 && key[0] == "tools" && key[1] == "limits":
		name, n := key[2], next.Tools.Limits[key[2]]
		if old, ok := prev.Tools.Limits[name]; ok && old > 0 {
			if n > old {
				return fmt.Errorf("tools.limits.%s raises the limit from %d to %d", name, old, n)
			}
			return nil
		}
		if limit, capped := caps(name); capped && n > limit {
			return fmt.Errorf("tools.limits.%s raises the limit from the built-in %d to %d", name, limit, n)
		}
		return nil
	case k == "permissions.unattended":
		if prev.Permissions.Unattended && !next.Permissions.Unattended {
			return errors.New("permissions.unattended = false would let a prompt wait for someone in an unattended run")
		}
		return nil
	case k == "permissions.mode":
		if next.Permissions.Mode == prev.Permissions.Mode {
			return nil
		}
		pm, _ := permission.ParseMode(prev.Permissions.Mode)
		nm, err := permission.ParseMode(next.Permissions.Mode)
		if err != nil {
			return fmt.Errorf("permissions.mode: %w", err)
		}
		if nm.Looser(pm) {
			return fmt.Errorf("permissions.mode %q is looser than %q", nm, pm)
		}
		return nil
	case key[0] == "permissions" && key[1] == "rules":
		for i, r := range next.Permissions.Rules {
			var d gate.Decision
			switch err := d.UnmarshalText([]byte(r.Decision)); {
			case err != nil:
				return fmt.Errorf("permissions.rules[%d] has decision %q: a project's rule may only ask or deny", i, r.Decision)
			case d == gate.Allow:
				return fmt.Errorf("permissions.rules[%d] is an allow rule", i)
			}
		}
		return nil
	case k == "network.allow":
		for _, h := range next.Network.Allow {
			if !slices.Contains(prev.Network.Allow, h) {
				return fmt.Errorf("network.allow adds %q", h)
			}
		}
		return nil
	case k == "network.domains":
		// Empty means every public host: a project may set a list where
		// there was none, and only shorten one there was.
		if len(next.Network.Domains) == 0 && len(prev.Network.Domains) > 0 {
			return errors.New("network.domains emptied lets webfetch reach every public host")
		}
		if len(prev.Network.Domains) > 0 {
			if h, ok := added(prev.Network.Domains, next.Network.Domains); ok {
				return fmt.Errorf("network.domains adds %q", h)
			}
		}
		return nil
	case k == "sandbox.network":
		return nil // a table: its keys are judged one by one
	case k == "sandbox.network.allow":
		if h, ok := added(prev.Sandbox.Network.Allow, next.Sandbox.Network.Allow); ok {
			return fmt.Errorf("sandbox.network.allow adds %q", h)
		}
		return nil
	case k == "sandbox.network.internal":
		if h, ok := added(prev.Sandbox.Network.Internal, next.Sandbox.Network.Internal); ok {
			return fmt.Errorf("sandbox.network.internal adds %q", h)
		}
		return nil
	case k == "sandbox.network.max_connections":
		was, now := prev.Sandbox.Network.MaxConnections, next.Sandbox.Network.MaxConnections
		if was == 0 {
			was = egress.DefaultMaxConns
		}
		if now <= 0 || now > was {
			return fmt.Errorf("sandbox.network.max_connections %d raises the limit of %d", now, was)
		}
		return nil
	case k == "sandbox.network.max_bytes":
		limit := func(v string) (int64, error) {
			n, err := parseBytes(v)
			switch {
			case err != nil:
				return 0, err
			case n == 0:
				return egress.DefaultMaxBytes, nil
			case n < 0:
				return math.MaxInt64, nil
			}
			return n, nil
		}
		was, err := limit(prev.Sandbox.Network.MaxBytes)
		if err != nil {
			return fmt.Errorf("sandbox.network.max_bytes: %w", err)
		}
		now, err := limit(next.Sandbox.Network.MaxBytes)
		if err != nil {
			return fmt.Errorf("sandbox.network.max_bytes: %w", err)
		}
		if now > was {
			return fmt.Errorf("sandbox.network.max_bytes %q raises the limit", next.Sandbox.Network.MaxBytes)
		}
		return nil
	case k == "flow.on_hit":
		if was, now := flowStrictness[prev.Flow.OnHit], flowStrictness[next.Flow.OnHit]; next.Flow.OnHit != prev.Flow.OnHit && now < was {
			return fmt.Errorf("flow.on_hit %q is looser than %q", next.Flow.OnHit, prev.Flow.OnHit)
		}
		return nil
	case k == "audit.dir":
		return errors.New("audit.dir moves the audit log")
	case k == "audit.durability":
		was, okWas := durabilityStrictness[prev.Audit.Durability]
		now, okNow := durabilityStrictness[next.Audit.Durability]
		if !okNow || (okWas && now < was) {
			return fmt.Errorf("audit.durability %q is weaker than %q: the log may then be lost in a crash", next.Audit.Durability, prev.Audit.Durability)
		}
		return nil
	case k == "sandbox.backend":
		if next.Sandbox.Backend != prev.Sandbox.Backend && (next.Sandbox.Backend == "none" || prev.Sandbox.Backend == "none" || next.Sandbox.Backend == "auto") {
			return fmt.Errorf("sandbox.backend %q may weaken the sandbox", next.Sandbox.Backend)
		}
		return nil
	case k == "sandbox.stage_ask_above":
		eff := func(n int) int {
			if n == 0 {
				return 20
			}
			if n < 0 {
				return math.MaxInt
			}
			return n
		}
		if eff(next.Sandbox.StageAskAbove) > eff(prev.Sandbox.StageAskAbove) {
			return fmt.Errorf("sandbox.stage_ask_above %d lets more files change before rein asks", next.Sandbox.StageAskAbove)
		}
		return nil
	case k == "sandbox.unstaged":
		if next.Sandbox.Unstaged && !prev.Sandbox.Unstaged {
			return errors.New("sandbox.unstaged turns off staged writes, so rollback cannot undo commands")
		}
		return nil
	case k == "sandbox.image" || k == "sandbox.runtime":
		return errors.New("sandbox.image and sandbox.runtime choose what commands run in")
	case key[0] == "prices":
		return errors.New("prices change what the cost cap counts")
	case k == "protect.paths":
		return nil // paths are only ever added (apply keeps the earlier files')
	case k == "model.default":
		// Which of the user's providers to use: it takes no right (the
		// keys, the base URL and the cost cap stay the user's).
		return nil
	case k == "sandbox.memory":
		// A project may lower the commands' memory limit, never raise or
		// lift it.
		limit := func(v string) (int64, error) {
			n, err := sandbox.ParseMemory(v)
			switch {
			case err != nil:
				return 0, err
			case n == 0:
				return sandbox.DefaultMemory, nil
			case n < 0:
				return math.MaxInt64, nil
			}
			return n, nil
		}
		was, err := limit(prev.Sandbox.Memory)
		if err != nil {
			return fmt.Errorf("sandbox.memory: %w", err)
		}
		now, err := limit(next.Sandbox.Memory)
		if err != nil {
			return fmt.Errorf("sandbox.memory: %w", err)
		}
		if now > was {
			return fmt.Errorf("sandbox.memory %q raises the commands' memory limit", next.Sandbox.Memory)
		}
		return nil
	}
	return fmt.Errorf("%s cannot be set by a project: rein has no rule for whether it takes rights away", k)
}

// added returns an entry of next that prev lacks, compared as rules
// (canonical host, wildcard and port) where both parse, else as text.
func added(prev, next []string) (string, bool) {
	norm := func(e string) string {
		if r, err := egress.ParseRule(e); err == nil {
			return r.String()
		}
		return strings.TrimSpace(e)
	}
	have := make(map[string]bool, len(prev))
	for _, e := range prev {
		have[norm(e)] = true
	}
	for _, e := range next {
		if !have[norm(e)] {
			return e, true
		}
	}
	return "", false
}
