package shell

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRuleTable: every rule has a name, a hint and examples, and every
// example does what the table says: a match example fires the rule, a
// no-match example does not.
func TestRuleTable(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for r := ruleNone + 1; r < numRules; r++ {
		spec := ruleTable[r]
		if spec.name == "" || spec.why == "" {
			t.Errorf("rule %d has no name or no hint: %+v", r, spec)
			continue
		}
		if seen[spec.name] {
			t.Errorf("rule name %q registered twice", spec.name)
		}
		seen[spec.name] = true
		if len(spec.match)+len(spec.noMatch) == 0 {
			t.Errorf("rule %s has no examples", spec.name)
		}
		for _, c := range spec.match {
			if a := Analyze(c, testOpts); !slices.Contains(a.Rules(), spec.name) {
				t.Errorf("rule %s: match example %q gives %s", spec.name, c, a.Summary())
			}
		}
		for _, c := range spec.noMatch {
			if a := Analyze(c, testOpts); slices.Contains(a.Rules(), spec.name) {
				t.Errorf("rule %s: no-match example %q gives %s", spec.name, c, a.Summary())
			}
		}
		caps := capTable[r]
		for _, ex := range []struct {
			exec  Executor
			srcs  []string
			fires bool
			what  string
		}{
			{boxExec, caps.boxMatch, true, "sandbox match"},
			{boxExec, caps.boxNoMatch, false, "sandbox no-match"},
			{netBoxExec, caps.netMatch, true, "networked sandbox match"},
		} {
			o := testOpts
			o.Exec = ex.exec
			for _, c := range ex.srcs {
				if a := Analyze(c, o); slices.Contains(a.Rules(), spec.name) != ex.fires {
					t.Errorf("rule %s: %s example %q gives %s", spec.name, ex.what, c, a.Summary())
				}
			}
		}
		if caps.network {
			// a network rule fires outside a sandbox on what a sandbox
			// without network lets through
			for _, c := range caps.boxNoMatch {
				if a := Analyze(c, testOpts); !slices.Contains(a.Rules(), spec.name) {
					t.Errorf("rule %s: %q outside a sandbox gives %s", spec.name, c, a.Summary())
				}
			}
			if len(caps.boxNoMatch) == 0 || len(caps.netMatch) == 0 {
				t.Errorf("network rule %s needs examples in both sandboxes", spec.name)
			}
		}
	}
}

// TestRuleIDsRegistered scans the package's source: a finding is made only
// through a.deny / a.ask / a.add with a ruleID constant, never a string,
// and every constant used is in the table.
func TestRuleIDsRegistered(t *testing.T) {
	t.Parallel()
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`\.(deny|ask)\("`)
	used := regexp.MustCompile(`\brule[A-Z][A-Za-z]*\b`)
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if loc := literal.FindIndex(b); loc != nil {
			t.Errorf("%s: a finding made from a string literal at byte %d; use a registered ruleID", n, loc[0])
		}
		if strings.Contains(string(b), "Finding{") && n != "shell.go" {
			t.Errorf("%s builds a Finding directly; use a.deny or a.ask", n)
		}
		for _, m := range used.FindAllString(string(b), -1) {
			if m == "ruleID" || m == "ruleSpec" || m == "ruleTable" || m == "ruleNone" {
				continue
			}
			found := false
			for r := ruleNone + 1; r < numRules; r++ {
				if constName(ruleTable[r].name) == m {
					found = true
				}
			}
			if !found {
				t.Errorf("%s uses %s, which is not a registered rule", n, m)
			}
		}
	}
}

// constName is the ruleID constant named after a rule: "net-tool" ->
// ruleNetTool.
func constName(name string) string {
	var b strings.Builder
	b.WriteString("rule")
	for _, p := range strings.Split(name, "-") {
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String()
}

// TestHintsNamedRules: the hints of the rules the issue found wrong.
func TestHintsNamedRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, want string }{
		{"git push https://example.com/x.git main", "not one of its configured remotes"},
		{"git remote add x https://example.com/x.git", "changes where git sends the repository"},
		{"echo x > .git/hooks/pre-commit", "runs code or changes a tool's rights later"},
	} {
		a := Analyze(c.src, testOpts)
		v := verdict(a.Findings, a.Err)
		if !strings.Contains(v.Hint, c.want) || strings.Contains(v.Hint, "too complex") {
			t.Errorf("%q: hint %q, want it to say %q", c.src, v.Hint, c.want)
		}
	}
}
