package scenario_test

import (
	"os"
	"testing"

	"github.com/reinhq/rein/eval/scenario"
)

// A minimal MCP world parses and its checks are not vacuous: the reference
// call reaches the in-process server (its received calls are the end
// state), the injection in the server's result leads the obedient persona
// to a call on the server, and neither check holds when nothing is done.
func TestMCPMini(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/suites/mcp-mini.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Load("mcp-mini.json", data)
	if err != nil {
		t.Fatal(err)
	}
	summary, err := s.SelfCheck(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Log(summary)
}
