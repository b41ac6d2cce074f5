package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/config"
)

// [sandbox.network] and [network] domains narrow like every other right:
// a project may take hosts away and lower the limits, never add a host,
// open an internal one, raise a limit, or empty webfetch's domain list.
func TestSandboxNetworkNarrows(t *testing.T) {
	t.Parallel()
	user := `
[sandbox.network]
allow = ["example.org", "*.example.net:443"]
internal = ["registry.corp:5000"]
max_connections = 100
max_bytes = "1GiB"
[network]
domains = ["docs.example.org"]
`
	for _, tt := range []struct{ name, content, want string }{
		{"host added", "[sandbox.network]\nallow = [\"example.org\", \"evil.example\"]\n", `sandbox.network.allow adds "evil.example"`},
		{"port widened", "[sandbox.network]\nallow = [\"*.example.net\"]\n", `sandbox.network.allow adds "*.example.net"`},
		{"internal host added", "[sandbox.network]\ninternal = [\"169.254.169.254\"]\n", `sandbox.network.internal adds`},
		{"connections raised", "[sandbox.network]\nmax_connections = 101\n", "sandbox.network.max_connections 101 raises"},
		{"connections lifted", "[sandbox.network]\nmax_connections = 0\n", "sandbox.network.max_connections 0 raises"},
		{"bytes raised", "[sandbox.network]\nmax_bytes = \"2GiB\"\n", "sandbox.network.max_bytes \"2GiB\" raises"},
		{"bytes lifted", "[sandbox.network]\nmax_bytes = \"none\"\n", "sandbox.network.max_bytes \"none\" raises"},
		{"domain added", "[network]\ndomains = [\"docs.example.org\", \"evil.example\"]\n", `network.domains adds "evil.example"`},
		{"domains emptied", "[network]\ndomains = []\n", "network.domains emptied"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Load(file(t, user), project(t, tt.content))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "only take rights away") {
				t.Errorf("%q: %v, want an error containing %q", tt.content, err, tt.want)
			}
		})
	}
	// Without a user config, a project may not open any host at all.
	if _, err := config.Load(project(t, "[sandbox.network]\nallow = [\"example.org\"]\n")); err == nil {
		t.Error("a project opened the network with no user config")
	}
	c, err := config.Load(file(t, user), project(t, `
[sandbox.network]
allow = ["EXAMPLE.org."]
internal = []
max_connections = 10
max_bytes = "10MiB"
[network]
domains = ["docs.example.org"]
`))
	if err != nil {
		t.Fatalf("narrowing: %v", err)
	}
	e, err := c.Sandbox.Network.Egress()
	if err != nil || !slices.Equal(e.Allow, []string{"EXAMPLE.org."}) || e.MaxConns != 10 || e.MaxBytes != 10<<20 || len(e.Guard.Allow) != 0 {
		t.Errorf("narrowed: %+v, %v", e, err)
	}
	// And a project may set webfetch's domain list where the user has none.
	if c, err := config.Load(project(t, "[network]\ndomains = [\"docs.example.org\"]\n")); err != nil || len(c.Network.Domains) != 1 {
		t.Errorf("a project's domain list: %v", err)
	}
}

func TestSandboxNetworkJunk(t *testing.T) {
	t.Parallel()
	for _, c := range []string{
		"[sandbox.network]\nallow = [\"*.com\"]\n",
		"[sandbox.network]\nallow = [\"http://example.org\"]\n",
		"[sandbox.network]\nallow = [\"example.org:0\"]\n",
		"[sandbox.network]\ninternal = [\"a b\"]\n",
		"[sandbox.network]\nmax_connections = -1\n",
		"[sandbox.network]\nmax_bytes = \"lots\"\n",
		"[network]\ndomains = [\"*\"]\n",
	} {
		if _, err := config.Load(file(t, c)); err == nil {
			t.Errorf("%q: no error", c)
		}
	}
}
