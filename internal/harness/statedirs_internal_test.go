package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckOutside(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	if err := os.MkdirAll(filepath.Join(work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(work, "sub"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		dir string
		bad bool
	}{
		{filepath.Join(work, "audit"), true},
		{filepath.Join(work, "sub", "deep", "audit"), true},
		{work, true},
		{base, true}, // holds the work dir
		{"/", true},
		{filepath.Join(base, "link", "audit"), true}, // a link into the work dir
		{filepath.Join(work, "..", "work", "x"), true},
		{filepath.Join(base, "audit"), false},
		{filepath.Join(base, "workx", "audit"), false}, // a sibling whose name starts like the work dir's
		{filepath.Join(base, "file", "audit"), false},  // cannot exist: audit.Create says so later
	} {
		err := checkOutside(work, "audit dir", tt.dir, "use --audit-dir")
		if tt.bad != errors.Is(err, ErrStateInWorkDir) {
			t.Errorf("checkOutside(%s) = %v, want refused %v", tt.dir, err, tt.bad)
		}
		if err != nil && !strings.Contains(err.Error(), "use --audit-dir") {
			t.Errorf("checkOutside(%s) = %v: the error does not name the fix", tt.dir, err)
		}
	}
}
