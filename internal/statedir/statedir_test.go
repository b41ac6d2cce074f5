package statedir

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestRoot(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		xdg     string
		want    string
		wantErr error
	}{
		{name: "absolute XDG_STATE_HOME", xdg: dir, want: filepath.Join(dir, "rein")},
		// Under go test the home directory is never the fallback: this is
		// the guard that keeps tests out of the user's state dir.
		{name: "unset, under test", xdg: "", wantErr: ErrUnderTest},
		{name: "relative, under test", xdg: "state", wantErr: ErrUnderTest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", tt.xdg)
			t.Setenv("HOME", t.TempDir()) // even a harmless home is refused
			got, err := Root()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Root() error = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("Root() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestResolveOutsideTests checks the fallback a real rein uses, which a
// test binary may not reach through Root.
func TestResolveOutsideTests(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no HOME") }
	tests := []struct {
		name string
		xdg  string
		home func() (string, error)
		want string
		ok   bool
	}{
		{"absolute XDG_STATE_HOME", "/xdg", home, "/xdg/rein", true},
		{"unset: the home's", "", home, "/home/u/.local/state/rein", true},
		{"relative is ignored", "relative", home, "/home/u/.local/state/rein", true},
		{"no home", "", noHome, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolve(tt.xdg, tt.home, false)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("resolve(%q) = %q, %v; want %q, ok %v", tt.xdg, got, err, tt.want, tt.ok)
			}
		})
	}
}
