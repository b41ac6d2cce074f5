package harness_test

import (
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
)

// TestGatesJudgeAsTheSandbox: the session's pipeline judges a command as
// the chosen backend will run it. Inline code and network tools ask or are
// refused without a sandbox, and run in landlock or a container, which stop
// the network; what the sandbox does not stop is judged the same way
// whatever the backend.
func TestGatesJudgeAsTheSandbox(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := workTools(t, dir, nil)
	tl, _ := reg.Lookup("run_bash")
	cmd := func(c string) *gate.Call {
		b, _ := json.Marshal(map[string]string{"command": c})
		return &gate.Call{ID: "c1", Name: "run_bash", Args: b, Tool: tl}
	}
	boxed := []string{harness.SandboxLandlock, harness.SandboxDocker, "podman"}
	open := []string{harness.SandboxNone, "unavailable", ""}
	for _, c := range []struct {
		src           string
		boxed, unboxd gate.Decision // in bypass mode an Ask is refused
	}{
		{"python3 -c 'print(1+1)'", gate.Allow, gate.Deny},
		{`python3 -c "getattr(__import__('so'+'cket'), 'socket')()"`, gate.Deny, gate.Deny},
		{"curl https://example.com", gate.Allow, gate.Deny},
		{"go test ./...", gate.Allow, gate.Allow},
		{"echo x > /etc/x", gate.Deny, gate.Deny},
	} {
		for _, backends := range []struct {
			names []string
			want  gate.Decision
		}{{boxed, c.boxed}, {open, c.unboxd}} {
			for _, b := range backends.names {
				p, err := harness.Gates(harness.Policy{Allowed: []string{"run_bash"}, Mode: permission.Bypass,
					Exec: harness.Capabilities(b)}, dir, nil)
				if err != nil {
					t.Fatal(err)
				}
				if v := p.Decide(t.Context(), cmd(c.src)); v.Decision != backends.want {
					t.Errorf("%q with backend %q: %s (%s), want %s", c.src, b, v.Decision, v.Reason, backends.want)
				}
			}
		}
	}
}
