package gate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
)

// roled is a tool with one argument of each role the views read.
type roled struct{}

func (roled) Spec() tool.Spec {
	return tool.Spec{Name: "roled", Roles: map[string]tool.Role{
		"cmd": tool.RoleCommand, "cmd2": tool.RoleCommand, "file": tool.RolePath, "pattern": tool.RoleGlob,
		"dir": tool.RoleDir, "url": tool.RoleURL, "to": tool.RoleRecipient}}
}
func (roled) Run(context.Context, json.RawMessage) (string, error) { return "", nil }

func TestViews(t *testing.T) {
	t.Parallel()
	c := &gate.Call{Name: "roled", Tool: roled{}, Args: json.RawMessage(`{
		"cmd": "\u0063url  'x'", "cmd2": 7, "file": "./a/../b\u0000", "pattern": null,
		"url": "https://ex\u0061mple.com/p?q=1", "to": "a@b.c"}`)}
	cmds := c.Commands()
	if len(cmds) != 1 || cmds[0].Arg != "cmd" || cmds[0].Src != "curl  'x'" || cmds[0].Err != nil {
		t.Fatalf("commands %+v: want the one string command, decoded", cmds)
	}
	if w := cmds[0].Words(); len(w) != 2 || w[0].Text != "curl" || w[1].Text != "x" {
		t.Fatalf("words %+v", w)
	}
	if again := c.Commands(); &again[0] != &cmds[0] {
		t.Fatal("Commands parsed again")
	}
	paths := c.Paths()
	want := []gate.PathArg{
		{Name: "file", Role: tool.RolePath, Value: "./a/../b\x00", Clean: "b\x00", String: true},
		{Name: "pattern", Role: tool.RoleGlob, Value: "", Clean: ".", String: false},
	}
	if len(paths) != len(want) {
		t.Fatalf("paths %+v, want %+v", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Errorf("path %d: %+v, want %+v", i, paths[i], want[i])
		}
	}
	urls := c.URLs()
	if len(urls) != 1 || urls[0].Name != "url" || urls[0].URL == nil || urls[0].URL.Host != "example.com" || urls[0].Err != nil {
		t.Fatalf("urls %+v", urls)
	}
	if again := c.URLs(); again[0].URL != urls[0].URL {
		t.Fatal("URLs parsed again")
	}

	// Arguments that are not an object have no views.
	bad := &gate.Call{Name: "roled", Tool: roled{}, Args: json.RawMessage(`["curl x"]`)}
	if len(bad.Commands()) != 0 || len(bad.Paths()) != 0 || len(bad.URLs()) != 0 {
		t.Fatal("views of arguments that are not an object")
	}
	// Nor has a call without a tool.
	ghost := &gate.Call{Name: "ghost", Args: json.RawMessage(`{"cmd":"ls"}`)}
	if len(ghost.Commands()) != 0 || len(ghost.Paths()) != 0 || len(ghost.URLs()) != 0 {
		t.Fatal("views of a call without a tool")
	}
}

func TestURLViewKeepsParseErrors(t *testing.T) {
	t.Parallel()
	c := &gate.Call{Name: "roled", Tool: roled{}, Args: json.RawMessage(`{"url":"http://[::1"}`)}
	if u := c.URLs(); len(u) != 1 || u[0].Err == nil || u[0].URL != nil || u[0].Value != "http://[::1" {
		t.Fatalf("%+v", u)
	}
}

type keyA struct{}
type keyB struct{}

func TestMemo(t *testing.T) {
	t.Parallel()
	c := &gate.Call{Name: "x"}
	n := 0
	compute := func() any { n++; return n }
	first := c.Memo(keyA{}, compute)
	again := c.Memo(keyA{}, compute)
	if first != 1 || again != 1 || n != 1 {
		t.Fatal("Memo computed a slot twice")
	}
	if c.Memo(keyB{}, compute) != 2 {
		t.Fatal("two keys share a slot")
	}
}
