package harness_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate/permission"
	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/model/scripted"
)

func model(t *testing.T, js string) *scripted.Model {
	t.Helper()
	s, err := scripted.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return scripted.New("scripted:test", s)
}

func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, err := harness.Run(t.Context(), harness.Spec{
		Task:   "sum",
		Model:  model(t, `{"turns":[{"text":"","calls":[{"tool":"calc","args":{"expression":"1 000"}}]},{"text":"It is 1 000."}]}`),
		Policy: harness.Policy{Allowed: []string{"calc"}}, Expect: "1000", AuditDir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	// calc refuses "1 000", the answer still contains 1000: the check looks at the answer.
	f := out.Final()
	if f.Stop != "done" || f.Check != harness.CheckPass || f.Audit != filepath.Join(dir, f.Session+".jsonl") || f.Error != "" {
		t.Fatalf("%+v", f)
	}
	if _, err := os.Stat(f.Audit); err != nil {
		t.Fatal(err)
	}
}

func TestCheckNeedsDone(t *testing.T) {
	t.Parallel()
	out, err := harness.Run(t.Context(), harness.Spec{
		Task:   "sum",
		Model:  model(t, `{"turns":[{"text":"1399","calls":[{"tool":"calc","args":{"expression":"1"}}]}]}`),
		Policy: harness.Policy{Allowed: []string{"calc"}}, Expect: "1399", AuditDir: t.TempDir(),
		Limits: maxSteps(1),
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != agent.StopMaxSteps || out.Check != harness.CheckFail || out.Final().Error == "" {
		t.Fatalf("stop %s check %s: a run that did not end done cannot pass", out.Stop, out.Check)
	}
}

func TestRunRefusesBadSpecs(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		spec harness.Spec
		want string
	}{
		{"bad expect", harness.Spec{Expect: "about 3", Policy: harness.Policy{Allowed: []string{"calc"}}}, "not a number"},
		{"unknown tool", harness.Spec{Policy: harness.Policy{Allowed: []string{"calc", "rm"}}}, `"rm"`},
		{"audit dir is a file", harness.Spec{Policy: harness.Policy{Allowed: []string{"calc"}}, AuditDir: file}, "audit log"},
		{"work dir missing", harness.Spec{WorkDir: filepath.Join(file, "nope"), Policy: harness.Policy{Allowed: []string{"calc"}}}, "work dir"},
		{"bad rule", harness.Spec{Policy: harness.Policy{Allowed: []string{"calc"}, Rules: []permission.Rule{{Tool: "x", Decision: "perhaps"}}}}, "permission rule 1"},
	} {
		c.spec.Model = model(t, `{"turns":[{"text":"x"}]}`)
		if c.spec.AuditDir == "" {
			c.spec.AuditDir = t.TempDir()
		}
		_, err := harness.Run(t.Context(), c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func maxSteps(n int) budget.Limits { return budget.Limits{MaxSteps: n} }
