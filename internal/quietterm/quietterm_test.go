package quietterm

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// startTERM is TERM as this process was started, from /proc/self/environ
// (which Setenv does not change).
func startTERM(t *testing.T) (string, bool) {
	data, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Skipf("no /proc/self/environ: %v", err)
	}
	for _, kv := range bytes.Split(data, []byte{0}) {
		if v, ok := strings.CutPrefix(string(kv), "TERM="); ok {
			return v, true
		}
	}
	return "", false
}

func TestInitThenRestore(t *testing.T) {
	if got := os.Getenv("TERM"); got != "dumb" {
		t.Fatalf("after init TERM=%q, want dumb (no terminal query by the inits after this one)", got)
	}
	Restore()
	Restore() // a second call changes nothing
	want, set := startTERM(t)
	got, ok := os.LookupEnv("TERM")
	if got != want || ok != set {
		t.Fatalf("after Restore TERM=%q (set %v), want %q (set %v) as the process started", got, ok, want, set)
	}
}
