package audit_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/audit"
)

// TestCheckLinked: a log whose file was deleted, or renamed away and
// replaced, is reported; one left alone, and one on a stream, are not.
func TestCheckLinked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, path string)
		want   string // "" for no error
	}{
		{"left alone", func(*testing.T, string) {}, ""},
		{"deleted", func(t *testing.T, path string) {
			if err := os.RemoveAll(filepath.Dir(path)); err != nil {
				t.Fatal(err)
			}
		}, "was deleted"},
		{"renamed away and replaced", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "was replaced by another file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, err := audit.Create(filepath.Join(t.TempDir(), "audit"), "20260101T000000Z-linked")
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.Write(audit.Record{Type: audit.SessionStart}); err != nil {
				t.Fatal(err)
			}
			tt.change(t, w.Path())
			err = w.CheckLinked()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("CheckLinked: %v; want %q", err, tt.want)
			}
		})
	}
	if err := audit.NewWriter(&bytes.Buffer{}, "20260101T000000Z-stream").CheckLinked(); err != nil {
		t.Errorf("a stream: %v", err)
	}
}
