package harness_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
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
		Policy: harness.Policy{Allowed: []string{"calc"}}, AuditDir: dir, WorkDir: t.TempDir(), NoRollback: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != agent.StopDone || out.Answer != "It is 1 000." || out.Audit != filepath.Join(dir, out.Session+".jsonl") || out.Err != nil {
		t.Fatalf("%+v", out)
	}
	if _, err := os.Stat(out.Audit); err != nil {
		t.Fatal(err)
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
		{"no work dir", harness.Spec{WorkDir: "-", Policy: harness.Policy{Allowed: []string{"calc"}}}, "WorkDir is required"},
		{"unknown tool", harness.Spec{Policy: harness.Policy{Allowed: []string{"calc", "rm"}}}, `"rm"`},
		{"audit dir is a file", harness.Spec{Policy: harness.Policy{Allowed: []string{"calc"}}, AuditDir: file}, "audit log"},
		{"work dir missing", harness.Spec{WorkDir: filepath.Join(file, "nope"), Policy: harness.Policy{Allowed: []string{"calc"}}}, "work dir"},
		{"bad rule", harness.Spec{Policy: harness.Policy{Allowed: []string{"calc"}, Rules: []permission.Rule{{Tool: "x", Decision: "perhaps"}}}}, "permission rule 1"},
	} {
		c.spec.Model = model(t, `{"turns":[{"text":"x"}]}`)
		if c.spec.AuditDir == "" {
			c.spec.AuditDir = t.TempDir()
		}
		switch c.spec.WorkDir {
		case "":
			c.spec.WorkDir = t.TempDir()
		case "-":
			c.spec.WorkDir = ""
		}
		_, err := harness.Run(t.Context(), c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
