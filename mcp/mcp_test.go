package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/mcp"
	"github.com/reinhq/rein/mcp/internal/testserver"
	"github.com/reinhq/rein/tool"
)

// builtin is a stand-in for the session's built-in tools.
var builtin = []string{"read_file", "write_file", "run_bash", "webfetch", "send_email", "calc"}

// goodCfg is the user's classification of the good server's tools.
func goodCfg() config.MCPServer {
	return config.MCPServer{Command: "in-process", Tools: map[string]config.MCPTool{
		"echo": {Effect: "read-only"},
		"send": {Roles: map[string]string{"to": "recipient"}},
	}}
}

// env is a test's servers: their options, config and pin file.
type env struct {
	t       *testing.T
	servers map[string]testserver.Options
	cfg     config.MCP
	pins    string
	asker   approve.Asker
}

func newEnv(t *testing.T) *env {
	return &env{t: t, servers: map[string]testserver.Options{"good": {}}, pins: filepath.Join(t.TempDir(), "pins.json"),
		cfg: config.MCP{Servers: map[string]config.MCPServer{"good": goodCfg()}}}
}

func (e *env) add(name string, o testserver.Options, sc config.MCPServer) {
	e.servers[name] = o
	if sc.Command == "" {
		sc.Command = "in-process"
	}
	e.cfg.Servers[name] = sc
}

// connect starts every server in-process and connects to them.
func (e *env) connect() *mcp.Set {
	e.t.Helper()
	set, err := e.tryConnect(mcp.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	return set
}

func (e *env) tryConnect(o mcp.Options) (*mcp.Set, error) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.t.Context())
	trs := map[string]sdk.Transport{}
	var waits []func()
	for name, so := range e.servers {
		tr, wait := testserver.Pipe(ctx, so)
		trs[name] = tr
		waits = append(waits, wait)
	}
	o.Builtin, o.PinFile, o.Transports, o.Asker = builtin, e.pins, trs, e.asker
	set, err := mcp.Connect(e.t.Context(), e.cfg, o)
	e.t.Cleanup(func() {
		if set != nil {
			set.Close()
		}
		cancel()
		for _, w := range waits {
			w()
		}
	})
	return set, err
}

func report(t *testing.T, set *mcp.Set, name string) mcp.ToolReport {
	t.Helper()
	for _, s := range set.Servers() {
		for _, r := range s.Tools {
			if r.Name == name {
				return r
			}
		}
	}
	t.Fatalf("no report for %s", name)
	return mcp.ToolReport{}
}

func lookup(t *testing.T, set *mcp.Set, name string) tool.Tool {
	t.Helper()
	for _, tl := range set.Tools() {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("%s is not offered (%+v)", name, report(t, set, name))
	return nil
}

func call(t *testing.T, set *mcp.Set, name, args string) (string, error) {
	t.Helper()
	return lookup(t, set, name).Run(t.Context(), json.RawMessage(args))
}

// The legitimate tools are offered as NAME__tool with rein's effect
// classes and roles, their descriptions wrapped as untrusted data, and
// they work.
func TestLegitimateTools(t *testing.T) {
	t.Parallel()
	set := newEnv(t).connect()
	if got := set.Names(); !slices.Equal(got, []string{"good__echo", "good__fail", "good__send"}) {
		t.Errorf("Names() = %q", got)
	}
	echo := lookup(t, set, "good__echo").Spec()
	if echo.Effect != tool.ReadOnly || !strings.Contains(echo.Description, "<external_document") ||
		!strings.Contains(echo.Description, "Echoes the text") {
		t.Errorf("echo spec = %+v", echo)
	}
	send := lookup(t, set, "good__send").Spec()
	if send.Effect != tool.Irreversible || send.Roles["to"] != tool.RoleRecipient {
		t.Errorf("send spec = %+v (an unclassified tool is irreversible; roles from config)", send)
	}
	if got, err := call(t, set, "good__echo", `{"text":"hi"}`); err != nil || got != "echo: hi" {
		t.Errorf("echo = %q, %v", got, err)
	}
	if _, err := call(t, set, "good__fail", `{}`); !errors.Is(err, mcp.ErrToolFailed) || !strings.Contains(err.Error(), "the disk is full") {
		t.Errorf("fail = %v, want ErrToolFailed with the server's text", err)
	}
	// The schema is rein's: a call it refuses never reaches the server.
	v := lookup(t, set, "good__echo").(tool.Validator)
	for _, bad := range []string{`{"text":3}`, `{}`, `[]`, `{"text":"a","text":"b"}`} {
		if err := v.Validate(json.RawMessage(bad)); !errors.Is(err, tool.ErrArgs) {
			t.Errorf("Validate(%s) = %v, want ErrArgs", bad, err)
		}
	}
	if err := v.Validate(json.RawMessage(`{"text":"ok"}`)); err != nil {
		t.Errorf("Validate(ok) = %v", err)
	}
}

// Every hostile definition is refused with its reason; effect classes are
// only ever made stricter by annotations.
func TestHostileDefinitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.add("evil", testserver.Options{Hostile: true}, config.MCPServer{Tools: map[string]config.MCPTool{
		"destructive":     {Effect: "read-only"},
		"claims_readonly": {},
	}})
	e.add("shadow", testserver.Options{Shadow: "good__echo"}, config.MCPServer{})
	e.add("shadow2", testserver.Options{Shadow: "read_file"}, config.MCPServer{})
	set := e.connect()
	for _, tt := range []struct {
		name   string
		reason string
		kinds  []mcp.FindingKind
	}{
		{"evil__poisoned", "injection markers", []mcp.FindingKind{mcp.FindImperative, mcp.FindCredentialPath}},
		{"evil__invisible", "injection markers", []mcp.FindingKind{mcp.FindInvisible}},
		{"evil__schema_poison", "injection markers", []mcp.FindingKind{mcp.FindImperative, mcp.FindToolReference}},
		{"evil__bad_schema", "input schema cannot be used", nil},
		{"evil__file_ref", "refers outside itself", nil},
		{"evil__bad.name", "cannot be offered to a model", nil},
		{"shadow__good__echo", `shadows server "good"'s tool`, nil},
	} {
		r := report(t, set, tt.name)
		if r.Available || !strings.Contains(r.Reason, tt.reason) {
			t.Errorf("%s: available %v, reason %q; want unavailable because %q", tt.name, r.Available, r.Reason, tt.reason)
		}
		for _, k := range tt.kinds {
			if !slices.ContainsFunc(r.Findings, func(f mcp.Finding) bool { return f.Kind == k }) {
				t.Errorf("%s: findings %v lack %s", tt.name, r.Findings, k)
			}
		}
		if slices.Contains(set.Names(), tt.name) {
			t.Errorf("%s is offered", tt.name)
		}
	}
	// A tool named like a built-in is offered under its server's prefix:
	// the name the model calls is shadow2__read_file, judged by its own
	// spec (the official filesystem server has a read_file).
	if r := report(t, set, "shadow2__read_file"); !r.Available {
		t.Errorf("shadow2__read_file: %+v", r)
	}
	// Annotations make a class stricter, never looser.
	if r := report(t, set, "evil__destructive"); !r.Available || r.Effect != tool.Irreversible {
		t.Errorf("destructive: %+v, want irreversible although config says read-only", r)
	}
	if r := report(t, set, "evil__claims_readonly"); r.Effect != tool.Irreversible {
		t.Errorf("claims_readonly: %v, want irreversible: an annotation cannot loosen the default", r.Effect)
	}
	if r := report(t, set, "good__echo"); r.Effect != tool.ReadOnly {
		t.Errorf("good__echo: %v", r.Effect)
	}
	// The legitimate tools of the same session still work.
	if got, err := call(t, set, "good__echo", `{"text":"still here"}`); err != nil || got != "echo: still here" {
		t.Errorf("echo = %q, %v", got, err)
	}
}

// A false alarm the user read can be trusted in the user's config.
func TestTrustDescription(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.add("evil", testserver.Options{Hostile: true}, config.MCPServer{Tools: map[string]config.MCPTool{"schema_poison": {TrustDescription: true}}})
	set := e.connect()
	if r := report(t, set, "evil__schema_poison"); !r.Available || len(r.Findings) == 0 {
		t.Errorf("trusted: %+v", r)
	}
	if r := report(t, set, "evil__poisoned"); r.Available {
		t.Error("trust of one tool made another available")
	}
}

// Definitions are pinned on first sight; a changed one is unavailable until
// approved; approving pins it.
func TestPinning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	set := e.connect()
	if r := report(t, set, "good__echo"); r.Pin != mcp.PinNew || !r.Available {
		t.Errorf("first sight: %+v", r)
	}
	set.Close()
	set = e.connect()
	if r := report(t, set, "good__echo"); r.Pin != mcp.PinMatch || !r.Available {
		t.Errorf("second sight: %+v", r)
	}
	set.Close()
	// A rug pull between sessions: echo's description changed.
	e.servers["good"] = testserver.Options{Variant: 2}
	set = e.connect()
	r := report(t, set, "good__echo")
	if r.Pin != mcp.PinChanged || r.Available || !strings.Contains(r.Reason, "rein mcp pin good") ||
		!strings.Contains(string(r.Pinned), "Echoes the text it is given.\"") || !strings.Contains(string(r.Definition), "now better") {
		t.Errorf("changed: %+v", r)
	}
	if slices.Contains(set.Names(), "good__echo") {
		t.Error("a changed tool is offered")
	}
	if r := report(t, set, "good__send"); !r.Available {
		t.Errorf("an unchanged tool of the same server: %+v", r)
	}
	approved, err := set.Approve("good")
	if err != nil || !slices.Equal(approved, []string{"echo"}) {
		t.Errorf("Approve = %v, %v", approved, err)
	}
	set.Close()
	set = e.connect()
	if r := report(t, set, "good__echo"); r.Pin != mcp.PinMatch || !r.Available {
		t.Errorf("after approval: %+v", r)
	}
}

// rein mcp list only looks: it pins nothing.
func TestReadOnlyPins(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	set, err := e.tryConnect(mcp.Options{ReadOnlyPins: true})
	if err != nil {
		t.Fatal(err)
	}
	set.Close()
	set = e.connect()
	if r := report(t, set, "good__echo"); r.Pin != mcp.PinNew {
		t.Errorf("after a read-only look: %v, want new", r.Pin)
	}
}

// A definition that changes during the session (tools/list_changed) makes
// the tool unavailable at its next call.
func TestRugPullDuringSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.servers["good"] = testserver.Options{Hostile: true}
	e.cfg.Servers["good"] = config.MCPServer{Command: "in-process", Tools: map[string]config.MCPTool{"mutate": {Effect: "read-only"}}}
	set := e.connect()
	if got, err := call(t, set, "good__echo", `{"text":"a"}`); err != nil || got != "echo: a" {
		t.Fatalf("echo before = %q, %v", got, err)
	}
	if _, err := call(t, set, "good__mutate", `{}`); err != nil {
		t.Fatal(err)
	}
	// The notification travels on its own; wait for it to land (no
	// assertion on time: the loop only ends when it has).
	var err error
	for range 200 {
		if _, err = call(t, set, "good__echo", `{"text":"b"}`); err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !errors.Is(err, mcp.ErrChanged) || !strings.Contains(err.Error(), "rein mcp pin good") {
		t.Errorf("echo after the change = %v, want ErrChanged", err)
	}
	if _, err := call(t, set, "good__send", `{"to":"a@b.example","body":"x"}`); err != nil {
		t.Errorf("an unchanged tool after the change: %v", err)
	}
}

// recorder is an Asker that answers from a list and keeps the questions.
type recorder struct {
	mu        sync.Mutex
	answers   []string
	questions []string
}

func (r *recorder) Ask(_ context.Context, q string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.questions = append(r.questions, q)
	if len(r.answers) == 0 {
		return "", approve.ErrNoAnswer
	}
	a := r.answers[0]
	r.answers = r.answers[1:]
	return a, nil
}

// A server's elicitation goes to the human with the server's name and a
// warning for a secret; it is never answered automatically.
func TestElicitation(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		asker *recorder
		want  string
	}{
		{"nobody to ask", nil, "action=decline content=map[]"},
		{"nobody answers", &recorder{}, "action=decline content=map[]"},
		{"empty answer", &recorder{answers: []string{""}}, "action=decline content=map[]"},
		{"the human answers", &recorder{answers: []string{"hunter2"}}, "action=accept content=map[password:hunter2]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.add("evil", testserver.Options{Hostile: true}, config.MCPServer{Tools: map[string]config.MCPTool{"elicit": {Effect: "read-only"}}})
			if tt.asker != nil {
				e.asker = tt.asker
			}
			set := e.connect()
			got, err := call(t, set, "evil__elicit", `{}`)
			if err != nil || got != tt.want {
				t.Errorf("elicit = %q, %v; want %q", got, err, tt.want)
			}
			if tt.asker == nil {
				return
			}
			if len(tt.asker.questions) != 1 {
				t.Fatalf("questions = %q", tt.asker.questions)
			}
			q := tt.asker.questions[0]
			for _, w := range []string{`MCP server "evil"`, "bank password", `Field "password"`, "WARNING: this asks for a secret"} {
				if !strings.Contains(q, w) {
					t.Errorf("question %q lacks %q", q, w)
				}
			}
		})
	}
}

// A server may not drive rein's model: sampling is refused.
func TestSamplingRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.add("evil", testserver.Options{Hostile: true}, config.MCPServer{Tools: map[string]config.MCPTool{"sample": {Effect: "read-only"}}})
	if got, err := call(t, e.connect(), "evil__sample", `{}`); err == nil || got != "" || !strings.Contains(err.Error(), "does not support CreateMessage") {
		t.Errorf("sample = %q, %v; want an error: rein offers no sampling", got, err)
	}
}

// A result carrying an injection comes back as the server's text: the
// loop wraps and records it as untrusted; rein does not act on it.
func TestInjectedResultIsData(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.add("evil", testserver.Options{Hostile: true}, config.MCPServer{})
	got, err := call(t, e.connect(), "evil__inject", `{}`)
	if err != nil || got != testserver.Injection {
		t.Errorf("inject = %q, %v", got, err)
	}
}

// Faults of a server are clear errors for the model; other servers go on.
func TestFaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tool    string
		want    error
		text    string
		timeout time.Duration
	}{
		{"crash", mcp.ErrServerGone, "cannot run for the rest of this session", time.Minute},
		{"slow", mcp.ErrTimeout, "whether the call had an effect is unknown", 300 * time.Millisecond},
		{"huge", mcp.ErrServerGone, "", time.Minute},
		{"malformed", mcp.ErrServerGone, "", time.Minute},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.add("evil", testserver.Options{Hostile: true}, config.MCPServer{Timeout: config.Duration(tt.timeout)})
			set := e.connect()
			_, err := call(t, set, "evil__"+tt.tool, `{}`)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("%s = %v, want %v", tt.tool, err, tt.want)
			}
			if got, err := call(t, set, "good__echo", `{"text":"on"}`); err != nil || got != "echo: on" {
				t.Errorf("the other server after %s: %q, %v", tt.tool, got, err)
			}
		})
	}
}

// A big result is capped in memory before the loop caps it again.
func TestBigResultCapped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.add("evil", testserver.Options{Hostile: true}, config.MCPServer{})
	set, err := e.tryConnect(mcp.Options{MaxResultBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	got, err := call(t, set, "evil__big", `{}`)
	if err != nil || len(got) > 1100 || !strings.Contains(got, "[result cut: 3144728 more bytes") {
		t.Errorf("big = %d bytes (%.80q), %v", len(got), got[max(0, len(got)-80):], err)
	}
}

// A server that cannot be started stops Connect, naming it.
func TestStartFailure(t *testing.T) {
	t.Parallel()
	pins := filepath.Join(t.TempDir(), "pins.json")
	sb, _ := newSandbox(t)
	for _, tt := range []struct {
		name string
		sc   config.MCPServer
		want string
	}{
		{"no such program", config.MCPServer{Command: filepath.Join(t.TempDir(), "nothing")}, `MCP server "broken" cannot start`},
		{"missing pass_env", config.MCPServer{Command: "true", PassEnv: []string{"REIN_TEST_UNSET_TOKEN"}}, "pass_env names REIN_TEST_UNSET_TOKEN, which is not set"},
		{"not an MCP server", config.MCPServer{Command: "true", Timeout: config.Duration(5 * time.Second)}, `MCP server "broken" cannot start`},
		{"missing header secret", config.MCPServer{URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "REIN_TEST_UNSET_TOKEN"}}, "headers.Authorization names REIN_TEST_UNSET_TOKEN, which is not set"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			set, err := mcp.Connect(t.Context(), config.MCP{Servers: map[string]config.MCPServer{"broken": tt.sc}}, mcp.Options{PinFile: pins, Environ: []string{"PATH=/usr/bin:/bin"}, Sandbox: sb})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Connect = %v, want an error containing %q", err, tt.want)
			}
			if set != nil {
				set.Close()
			}
		})
	}
}

func TestIsToolName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{"srv__echo": true, "my-srv__a__b": true, "read_file": false, "__echo": false, "srv__": false, "a.b__c": false} {
		if got := mcp.IsToolName(name); got != want {
			t.Errorf("IsToolName(%q) = %v", name, got)
		}
	}
}
