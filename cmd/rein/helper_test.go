package main

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// rein uses rein-helper beside it only when both come from one build: a
// helper left from another version, another Go, other build settings or
// other dependencies is passed over for rein itself.
func TestChooseHelper(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	self := filepath.Join(dir, "rein")
	helper := filepath.Join(dir, helperName)
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", helper, "../rein-helper").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	built, err := buildinfo.ReadFile(helper)
	if err != nil {
		t.Fatal(err)
	}
	// rein's own build information as the same build would give it: its
	// command's path, and the helper's modules among its own.
	rein := func(edit func(*debug.BuildInfo)) *debug.BuildInfo {
		bi := *built
		bi.Path = "github.com/reinhq/rein/cmd/rein"
		bi.Deps = append([]*debug.Module{{Path: "example.com/only/rein", Version: "v1.0.0"}}, built.Deps...)
		bi.Settings = append([]debug.BuildSetting(nil), built.Settings...)
		if edit != nil {
			edit(&bi)
		}
		return &bi
	}
	otherDep := func(bi *debug.BuildInfo) {
		bi.Deps = append([]*debug.Module(nil), bi.Deps...)
		for i, d := range bi.Deps {
			if d.Path != "example.com/only/rein" {
				m := *d
				m.Version += "-other"
				bi.Deps[i] = &m
				return
			}
		}
		t.Fatal("the helper links no module")
	}
	for _, tc := range []struct {
		name string
		own  *debug.BuildInfo
		want string
	}{
		{"same build", rein(nil), helper},
		{"other Go", rein(func(bi *debug.BuildInfo) { bi.GoVersion += "-other" }), self},
		{"other version", rein(func(bi *debug.BuildInfo) { bi.Main.Version = "v0.0.1" }), self},
		{"other settings", rein(func(bi *debug.BuildInfo) {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "-ldflags", Value: "-X main.version=1"})
		}), self},
		{"other dependency", rein(otherDep), self},
		{"another program's helper", rein(func(bi *debug.BuildInfo) { bi.Path = "example.com/other/cmd/rein" }), self},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := chooseHelper(self, tc.own); got != tc.want {
				t.Errorf("chooseHelper = %s, want %s", got, tc.want)
			}
		})
	}
	if err := os.Chmod(helper, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := chooseHelper(self, rein(nil)); got != self {
		t.Errorf("a helper that is not executable: chooseHelper = %s, want rein itself", got)
	}
}
