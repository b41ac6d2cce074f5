package approve_test

import (
	"os"
	"testing"
)

func openNull(t *testing.T) (*os.File, error) {
	f, err := os.Open(os.DevNull)
	if err == nil {
		t.Cleanup(func() { f.Close() })
	}
	return f, err
}
