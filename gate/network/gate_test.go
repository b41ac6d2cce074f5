package network_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/gate/network"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/tool"
)

type fetchArgs struct {
	URL    string `json:"url"`
	Mirror string `json:"mirror"`
	Note   string `json:"note"`
}

func fetchTool() tool.Tool {
	return tool.New(tool.Spec{
		Name:   "fetch",
		Effect: tool.ReadOnly,
		Roles:  map[string]tool.Role{"url": tool.RoleURL, "mirror": tool.RoleURL},
	}, func(context.Context, fetchArgs) (string, error) { return "", nil })
}

func TestGate(t *testing.T) {
	t.Parallel()
	g := network.NewGate(&netguard.Policy{Allow: []string{"secret-wiki.corp", "127.0.0.1:8080"}})
	if g.Name() != "network" {
		t.Errorf("Name() = %q", g.Name())
	}
	plain := tool.New(tool.Spec{Name: "calc"}, func(context.Context, struct{}) (string, error) { return "", nil })
	tests := []struct {
		name string
		tool tool.Tool
		args string
		want gate.Decision
	}{
		{"public", fetchTool(), `{"url":"https://example.com/"}`, gate.Allow},
		{"both public", fetchTool(), `{"url":"https://example.com/","mirror":"https://example.org/"}`, gate.Allow},
		{"allowed internal", fetchTool(), `{"url":"http://127.0.0.1:8080/"}`, gate.Allow},
		{"allowed name", fetchTool(), `{"url":"http://secret-wiki.corp/page"}`, gate.Allow},
		{"absent optional URL", fetchTool(), `{"note":"x"}`, gate.Allow},
		{"loopback", fetchTool(), `{"url":"http://127.0.0.1/"}`, gate.Deny},
		{"other port", fetchTool(), `{"url":"http://127.0.0.1:8081/"}`, gate.Deny},
		{"second URL internal", fetchTool(), `{"url":"https://example.com/","mirror":"http://0x7f.1/"}`, gate.Deny},
		{"metadata", fetchTool(), `{"url":"http://169.254.169.254/latest/meta-data/"}`, gate.Deny},
		{"file scheme", fetchTool(), `{"url":"file:///etc/passwd"}`, gate.Deny},
		{"not a string", fetchTool(), `{"url":["http://127.0.0.1/"]}`, gate.Deny},
		{"null", fetchTool(), `{"url":null}`, gate.Deny},
		{"not an object", fetchTool(), `["http://127.0.0.1/"]`, gate.Deny},
		{"bad json", fetchTool(), `{"url":`, gate.Deny},
		{"no URL roles", plain, `{"url":"http://127.0.0.1/"}`, gate.Allow},
		{"unknown tool", nil, `{"url":"https://example.com/"}`, gate.Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &gate.Call{ID: "1", Name: "fetch", Args: json.RawMessage(tt.args), Tool: tt.tool}
			v := g.Check(t.Context(), c)
			if v.Decision != tt.want || v.Gate != "network" {
				t.Fatalf("Check = %+v, want %v", v, tt.want)
			}
			if v.Decision == gate.Deny && v.Reason == "" {
				t.Error("a Deny has no Reason")
			}
			// The model is never told what the allow-list holds.
			for _, secret := range []string{"secret-wiki", "8080"} {
				if strings.Contains(v.ForModel(), secret) {
					t.Errorf("the model's text %q reveals the allow-list (%s)", v.ForModel(), secret)
				}
			}
		})
	}
}

func TestGateHint(t *testing.T) {
	t.Parallel()
	c := &gate.Call{Name: "fetch", Args: json.RawMessage(`{"url":"http://10.0.0.1/"}`), Tool: fetchTool()}
	v := network.NewGate(nil).Check(t.Context(), c)
	if v.Decision != gate.Deny || v.Hint != network.Hint {
		t.Errorf("Check = %+v; want Deny with the standard hint", v)
	}
	if !strings.Contains(v.Reason, "10.0.0.1") {
		t.Errorf("Reason %q does not name the host", v.Reason)
	}
}

// In a pipeline the network gate refuses, and the refusal is final.
func TestGateInPipeline(t *testing.T) {
	t.Parallel()
	p := gate.NewPipeline(nil, gate.NewAvailability([]string{"fetch"}), gate.Validation{}, network.NewGate(nil))
	c := &gate.Call{Name: "fetch", Args: json.RawMessage(`{"url":"http://[::1]/"}`), Tool: fetchTool()}
	if v := p.Evaluate(t.Context(), c); v.Decision != gate.Deny || v.Gate != network.Name {
		t.Errorf("Evaluate = %+v; want Deny by network", v)
	}
}
