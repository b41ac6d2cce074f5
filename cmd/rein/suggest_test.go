package main

import "testing"

func TestClosest(t *testing.T) {
	t.Parallel()
	names := []string{"chat", "demo", "run", "policy", "tools", "audit", "rollback", "sandbox", "resume", "eval", "version"}
	tests := []struct {
		word, want string
		ok         bool
	}{
		{"rn", "run", true},
		{"rnu", "run", true},
		{"audti", "audit", true},
		{"rollbak", "rollback", true},
		{"RUN", "run", true},
		{"resme", "resume", true},
		{"ro", "", false},    // two edits from three names: no guess
		{"xyzzy", "", false}, // nothing near
		{"deploy", "", false},
	}
	for _, tt := range tests {
		got, ok := closest(tt.word, names)
		if ok != tt.ok || got != tt.want {
			t.Errorf("closest(%q) = %q, %v; want %q, %v", tt.word, got, ok, tt.want, tt.ok)
		}
	}
}
