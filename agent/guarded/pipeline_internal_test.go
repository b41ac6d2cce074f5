package guarded

import (
	"slices"
	"testing"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/gate/drift"
	"github.com/reinhq/rein/gate/flow"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/model/scripted"
)

// cliPolicy is the policy `rein run` builds from the default configuration
// (cmd/rein policyOf), with the drift gate and ledger harness.Run adds.
func cliPolicy(task string) harness.Policy {
	cfg := config.Default()
	return harness.Policy{Allowed: cfg.Tools.Allow, Mode: permission.Mode(cfg.Permissions.Mode),
		Rules: cfg.Permissions.Rules, ToolLimits: cfg.Tools.Limits, Flow: cfg.Flow.OnHit,
		Protected: cfg.Protect.List(), Drift: drift.New(task), Provenance: flow.NewLedger()}
}

// TestDefaultIsTheCLIs: with default options the builder's pipeline has the
// CLI's gates in the CLI's order, its allowlist, and the same sandbox choice.
func TestDefaultIsTheCLIs(t *testing.T) {
	dir := t.TempDir()
	script, err := scripted.Parse([]byte(`{"turns":[{"text":"ok"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(t.Context(), Options{WorkDir: dir, Model: scripted.New("t", script)})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() == "" {
		t.Fatal("no session id")
	}
	p := s.spec.Policy
	p.Drift, p.Provenance = drift.New("task"), flow.NewLedger() // what harness.Run adds when Drift is on, Flow not off
	if !s.spec.Drift || p.Flow == "off" {
		t.Fatalf("drift %v, flow %q: the CLI has both", s.spec.Drift, p.Flow)
	}
	got, err := harness.Gates(p, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := harness.Gates(cliPolicy("task"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Names(), want.Names()) {
		t.Errorf("gates:\n got  %v\n want %v", got.Names(), want.Names())
	}
	if !slices.Equal(p.Allowed, config.Default().Tools.Allow) {
		t.Errorf("allowlist %v, want the CLI's %v", p.Allowed, config.Default().Tools.Allow)
	}
	if s.spec.System == "" || s.spec.Redact == nil {
		t.Error("no system prompt or no redactor")
	}
	// The same sandbox: the CLI passes config's "auto", the builder "".
	_, gotB, c1, err := harness.OpenExecutor(t.Context(), s.spec.Sandbox, dir, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	_, wantB, c2, err := harness.OpenExecutor(t.Context(), harness.Sandbox{Backend: config.Default().Sandbox.Backend}, dir, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if gotB != wantB {
		t.Errorf("sandbox %q, the CLI's %q", gotB, wantB)
	}
}
