package main

import (
	"slices"
	"testing"

	"github.com/reinhq/rein/agent/guarded"
	"github.com/reinhq/rein/config"
)

// TestDefaultConfigIsTheBuildersDefault: the options rein run builds from
// the default configuration judge calls exactly as an embedder's zero
// options do: the same gates in the same order, the same tools offered,
// the same sandbox choice. What the CLI adds on top (the terminal
// approver, the start record's settings, the reaper) changes no verdict.
func TestDefaultConfigIsTheBuildersDefault(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	cli := optionsOf(config.Default(), nil)
	cli.WorkDir = work
	got, err := guarded.Pipeline(cli, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := guarded.Pipeline(guarded.Options{WorkDir: work}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Names(), want.Names()) {
		t.Errorf("the CLI's gates %v, the builder's %v", got.Names(), want.Names())
	}
	for _, name := range knownTools().Names() {
		if got.Offers(name) != want.Offers(name) {
			t.Errorf("%s: offered by the CLI %v, by the builder %v", name, got.Offers(name), want.Offers(name))
		}
	}
	if b := cli.Sandbox.Backend; b != guarded.SandboxAuto && b != "" {
		t.Errorf("the CLI's default sandbox %q, the builder's auto", b)
	}
	if cli.Sandbox.Helper == "" {
		t.Error("the CLI runs --sandbox none commands without its reaper")
	}
}
