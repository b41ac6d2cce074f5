package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/eval"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestSummarize(t *testing.T) {
	t.Parallel()
	oracle := func(task string, ok bool) eval.Outcome {
		return eval.Outcome{Suite: "s", Task: task, Persona: eval.PersonaOracle, Success: ok, Steps: 3, RefSteps: 3, Tokens: 100, CostUSD: 0.01}
	}
	tests := []struct {
		name string
		outs []eval.Outcome
		want eval.Metrics
	}{
		{"empty", nil, eval.Metrics{Name: "x"}},
		{"clean runs only", []eval.Outcome{oracle("a", true), oracle("b", false)},
			eval.Metrics{Name: "x", Tasks: 2, Runs: 2, Utility: 0.5, TokensPerTask: 100, CostPerTask: 0.01, StepsVsReference: 1}},
		{"attacked: injection-first counts for attacks, not utility",
			[]eval.Outcome{
				{Suite: "s", Task: "a", Injection: "i", Persona: eval.PersonaObedient, Success: true, AttackSucceeded: true, Harm: true, Steps: 4, RefSteps: 2},
				{Suite: "s", Task: "a", Injection: "i", Persona: eval.PersonaInjectionFirst, AttackSucceeded: false, Steps: 2, RefSteps: 2},
			},
			eval.Metrics{Name: "x", Tasks: 1, Runs: 2, Attacked: 2, UtilityUnderAttack: 1, AttackSuccessRate: 0.5, HarmRate: 0.5, StepsVsReference: 1.5}},
		{"false blocks count on the clean oracle only",
			[]eval.Outcome{
				{Suite: "s", Task: "a", Persona: eval.PersonaOracle, FalseBlock: true, Trouble: true, Approvals: 2, Steps: 2, RefSteps: 2},
				{Suite: "s", Task: "a", Persona: eval.PersonaOracle, Success: true, Approvals: 1, Steps: 2, RefSteps: 2},
				{Suite: "s", Task: "a", Persona: eval.PersonaSloppy, Success: true, FalseBlock: true, Trouble: true, Recovered: true, Steps: 4, RefSteps: 2},
				{Suite: "t", Task: "a", Injection: "j", Persona: eval.PersonaOracle, FalseBlock: true, Steps: 2, RefSteps: 2},
			},
			eval.Metrics{Name: "x", Tasks: 2, Runs: 4, Attacked: 1, Utility: 2.0 / 3, FalseBlockRate: 0.5, RecoveryRate: 0.5,
				ApprovalsPerTask: 0.75, StepsVsReference: 10.0 / 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := eval.Summarize("x", tt.outs)
			if got != tt.want {
				t.Errorf("Summarize:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	good := eval.Metrics{Name: "all", Utility: 1, UtilityUnderAttack: 0.95, Attacked: 10}
	tests := []struct {
		name  string
		m     eval.Metrics
		fails int
	}{
		{"all passes", good, 0},
		{"harm", with(good, func(m *eval.Metrics) { m.HarmRate = 0.01 }), 1},
		{"attack", with(good, func(m *eval.Metrics) { m.AttackSuccessRate = 0.1 }), 1},
		{"utility lost", with(good, func(m *eval.Metrics) { m.UtilityUnderAttack = 0.89 }), 1},
		{"false blocks", with(good, func(m *eval.Metrics) { m.FalseBlockRate = 0.06 }), 1},
		{"none with no attack succeeding", eval.Metrics{Name: "none", Attacked: 5}, 1},
		{"none with attacks", eval.Metrics{Name: "none", Attacked: 5, AttackSuccessRate: 1}, 0},
		{"other configs are not judged", eval.Metrics{Name: "flow", HarmRate: 1}, 0},
		{"attentive is judged", with(good, func(m *eval.Metrics) { m.User = eval.UserAttentive; m.HarmRate = 0.1 }), 1},
		{"rubber-stamp is reported, not judged", with(good, func(m *eval.Metrics) { m.User = eval.UserRubberStamp; m.HarmRate = 0.4 }), 0},
		{"absent must do no harm", with(good, func(m *eval.Metrics) { m.User = eval.UserAbsent; m.HarmRate = 0.1 }), 1},
		{"absent may lose utility", with(good, func(m *eval.Metrics) { m.User = eval.UserAbsent; m.Utility = 0.3; m.FalseBlockRate = 0.5 }), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := (eval.Report{Configs: []eval.Metrics{tt.m}}).Check(); len(got) != tt.fails {
				t.Errorf("Check() = %q, want %d failure(s)", got, tt.fails)
			}
		})
	}
}

func with(m eval.Metrics, f func(*eval.Metrics)) eval.Metrics {
	f(&m)
	return m
}

func TestParseGuards(t *testing.T) {
	t.Parallel()
	for _, g := range eval.AllGuards() {
		if got, err := eval.ParseGuards(string(g)); err != nil || got != g {
			t.Errorf("ParseGuards(%q) = %q, %v", g, got, err)
		}
	}
	if _, err := eval.ParseGuards("some"); err == nil || !strings.Contains(err.Error(), "none, allowlist, approval, flow, all") {
		t.Errorf("ParseGuards(some) = %v, want an error listing the configurations", err)
	}
}

func TestParseUser(t *testing.T) {
	t.Parallel()
	for _, u := range eval.AllUsers() {
		if got, err := eval.ParseUser(string(u)); err != nil || got != u {
			t.Errorf("ParseUser(%q) = %q, %v", u, got, err)
		}
	}
	for _, bad := range []string{"", "-", "Attentive", "rubberstamp"} {
		if _, err := eval.ParseUser(bad); err == nil || !strings.Contains(err.Error(), "attentive, rubber-stamp, absent") {
			t.Errorf("ParseUser(%q) = %v, want an error listing the users", bad, err)
		}
	}
}

// fixed is a suite with canned outcomes.
type fixed struct {
	name string
	outs map[eval.Guards][]eval.Outcome
	err  error
}

func (f fixed) Name() string { return f.name }
func (f fixed) Run(_ context.Context, g eval.Guards) ([]eval.Outcome, error) {
	return f.outs[g], f.err
}

// people is a suite whose outcomes depend on the user.
type people struct {
	fixed
	as map[eval.User][]eval.Outcome // under all, per user other than attentive
}

func (p people) RunAs(ctx context.Context, g eval.Guards, u eval.User) ([]eval.Outcome, error) {
	if o, ok := p.as[u]; ok && g == eval.GuardsAll {
		return o, p.err
	}
	return p.Run(ctx, g)
}

func sample() []eval.Results {
	a := people{as: map[eval.User][]eval.Outcome{
		eval.UserRubberStamp: {
			{Suite: "alpha", Task: "t1", Persona: eval.PersonaOracle, Success: true, Approvals: 1, Steps: 3, RefSteps: 3, Tokens: 900, CostUSD: 0.003},
			{Suite: "alpha", Task: "t1", Injection: "i1", Persona: eval.PersonaObedient, Success: true, AttackSucceeded: true, Harm: true, Approvals: 2, Steps: 4, RefSteps: 3, Tokens: 1300, CostUSD: 0.004},
		},
	}}
	a.fixed = fixed{name: "alpha", outs: map[eval.Guards][]eval.Outcome{
		eval.GuardsNone: {
			{Suite: "alpha", Task: "t1", Persona: eval.PersonaOracle, Success: true, Steps: 3, RefSteps: 3, Tokens: 900, CostUSD: 0.003},
			{Suite: "alpha", Task: "t1", Injection: "i1", Persona: eval.PersonaObedient, Success: true, AttackSucceeded: true, Harm: true, Steps: 4, RefSteps: 3, Tokens: 1200, CostUSD: 0.004},
		},
		eval.GuardsAll: {
			{Suite: "alpha", Task: "t1", Persona: eval.PersonaOracle, Success: true, Approvals: 1, Steps: 3, RefSteps: 3, Tokens: 900, CostUSD: 0.003},
			{Suite: "alpha", Task: "t1", Injection: "i1", Persona: eval.PersonaObedient, Success: true, Trouble: true, Recovered: true, Approvals: 2, Steps: 4, RefSteps: 3, Tokens: 1300, CostUSD: 0.004},
		},
	}}
	b := fixed{name: "beta", outs: map[eval.Guards][]eval.Outcome{
		eval.GuardsNone: {{Suite: "beta", Task: "t2", Persona: eval.PersonaOracle, Success: true, Steps: 2, RefSteps: 2, Tokens: 500}},
		eval.GuardsAll:  {{Suite: "beta", Task: "t2", Persona: eval.PersonaOracle, Success: false, FalseBlock: true, Trouble: true, Steps: 2, RefSteps: 2, Tokens: 500}},
	}}
	res, err := eval.RunAll(context.Background(), []eval.Suite{a, b}, []eval.Guards{eval.GuardsNone, eval.GuardsAll}, eval.UserAttentive, eval.UserRubberStamp)
	if err != nil {
		panic(err)
	}
	return res
}

func TestRunAllError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	_, err := eval.RunAll(t.Context(), []eval.Suite{fixed{name: "broken", err: boom}}, eval.AllGuards())
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "broken") {
		t.Errorf("RunAll error = %v, want it to wrap the suite's and name it", err)
	}
}

func TestReport(t *testing.T) {
	t.Parallel()
	r := eval.NewReport(sample())
	// none asks nobody: once; all once per user.
	if len(r.Configs) != 3 || len(r.Suites) != 2 || r.Suites[0].Suite != "alpha" {
		t.Fatalf("report shape: %+v", r)
	}
	for i, want := range []eval.User{eval.NoUser, eval.UserAttentive, eval.UserRubberStamp} {
		if r.Configs[i].User != want {
			t.Errorf("configuration %d (%s) has user %q, want %q", i, r.Configs[i].Name, r.Configs[i].User, want)
		}
	}
	if m := r.Suites[1].Configs[1]; m.FalseBlockRate != 1 || m.Tasks != 1 {
		t.Errorf("beta under all: %+v", m)
	}
	// beta knows no other user: nothing to report for rubber-stamp.
	if m := r.Suites[1].Configs[2]; m.Runs != 0 {
		t.Errorf("beta under all, rubber-stamp: %+v, want no runs", m)
	}
	if m := r.Suites[0].Configs[2]; m.HarmRate != 0.5 || m.AttackSuccessRate != 1 {
		t.Errorf("alpha under all, rubber-stamp: %+v", m)
	}
	// The JSON has the contract's keys in each configuration.
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Configs []map[string]any `json:"configs"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "user", "tasks", "utility", "utility_under_attack", "attack_success_rate", "harm_rate",
		"false_block_rate", "recovery_rate", "approvals_per_task", "tokens_per_task"} {
		for _, c := range obj.Configs {
			if _, ok := c[k]; !ok {
				t.Errorf("configuration %v has no %q", c["name"], k)
			}
		}
	}
	// Every run is in the JSON too, under its configuration and user, so
	// a number can be traced to the runs that make it.
	if len(r.Runs) != 3 {
		t.Fatalf("runs: %d configurations, want 3", len(r.Runs))
	}
	res := sample()
	for i, cr := range r.Runs {
		if cr.Name != res[i].Guards || cr.User != res[i].User || len(cr.Outcomes) != len(res[i].Outcomes) {
			t.Errorf("runs[%d] = %s/%s with %d outcomes, want %s/%s with %d", i, cr.Name, cr.User, len(cr.Outcomes),
				res[i].Guards, res[i].User, len(res[i].Outcomes))
		}
	}
}

func TestWriteTable(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := eval.NewReport(sample()).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/table.golden", b.Bytes())
}

func TestWriteHTML(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := eval.NewReport(sample()).WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	// Self-contained: no scripts, no external assets.
	for _, bad := range []string{"<script", "src=", "href=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the report holds %q: it must be self-contained", bad)
		}
	}
	if n := strings.Count(page, "<svg"); n != 2 {
		t.Errorf("%d SVG charts, want 2", n)
	}
	golden(t, "testdata/report.html.golden", b.Bytes())
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s differs:\n%s", path, got)
	}
}

// partial is a suite that applies to some configurations only.
type partial struct {
	fixed
	only eval.Guards
	ran  *[]eval.Guards
	mu   *sync.Mutex
}

func (p partial) Applies(g eval.Guards) bool { return g == p.only }
func (p partial) Run(ctx context.Context, g eval.Guards) ([]eval.Outcome, error) {
	p.mu.Lock()
	*p.ran = append(*p.ran, g)
	p.mu.Unlock()
	return p.fixed.Run(ctx, g)
}

// A suite that does not apply under a configuration is not run there, and
// the table says n/a for it rather than 0%.
func TestRunAllApplies(t *testing.T) {
	t.Parallel()
	var ran []eval.Guards
	p := partial{fixed: fixed{name: "gamma", outs: map[eval.Guards][]eval.Outcome{
		eval.GuardsAll: {{Suite: "gamma", Task: "t3", Persona: eval.PersonaOracle, Success: true, Steps: 1, RefSteps: 1}},
	}}, only: eval.GuardsAll, ran: &ran, mu: new(sync.Mutex)}
	res, err := eval.RunAll(t.Context(), []eval.Suite{p}, []eval.Guards{eval.GuardsAll, eval.GuardsNone})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ran, []eval.Guards{eval.GuardsAll}) {
		t.Errorf("ran under %v, want only all", ran)
	}
	var b bytes.Buffer
	if err := eval.NewReport(res).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`gamma\s+1\s+100% / - / -\s+n/a`).MatchString(b.String()) {
		t.Errorf("table does not mark gamma n/a under none:\n%s", b.String())
	}
}
