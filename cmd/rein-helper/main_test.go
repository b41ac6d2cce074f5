package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The helper's start is what each confined command pays before it runs:
// it links no module beyond the sandbox's own (internal/deps holds it to
// rein's sandbox package among rein's).
func TestLinksTheSandboxAlone(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		"":                                    true, // the standard library
		"github.com/reinhq/rein":              true,
		"github.com/landlock-lsm/go-landlock": true,
		"github.com/elastic/go-seccomp-bpf":   true,
		"golang.org/x/sys":                    true,
		"golang.org/x/net":                    true, // x/net/bpf, for the seccomp filter
		"kernel.org/pub/linux/libs/security/libcap/psx": true,
	}
	for m := range strings.Lines(string(out)) {
		if m = strings.TrimSpace(m); !allowed[m] {
			t.Errorf("rein-helper links module %s: every confined command would pay its initialisation", m)
		}
	}
}
