package testenv

import "testing"

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		env, comp string
		want      bool
	}{
		{"", "docker", false}, {"all", "docker", true}, {"docker,chromium", "docker", true},
		{"docker,chromium", "landlock", false}, {"dockerx", "docker", false},
	} {
		t.Setenv("REIN_REQUIRE", c.env)
		if got := Required(c.comp); got != c.want {
			t.Errorf("REIN_REQUIRE=%q Required(%q) = %v", c.env, c.comp, got)
		}
	}
}
