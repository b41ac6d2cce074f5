package eval

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the report as terminal tables: the configurations over
// all suites, then each suite's utility, utility under attack and attack
// success per configuration.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "guards\tuser\ttasks\truns\tutility\tutil/attack\tattack ok\tharm\tfalse block\trecovery\tapprovals\tsteps/ref\ttokens\tcost $\t")
	for _, m := range r.Configs {
		if m.Runs == 0 {
			fmt.Fprintf(tw, "%s\t%s\t0\t0\t%s\n", m.Name, m.User, strings.Repeat("n/a\t", 10))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%.0f\t%.4f\t\n",
			m.Name, m.User, m.Tasks, m.Runs, pct(m.Utility), attackPct(m, m.UtilityUnderAttack), attackPct(m, m.AttackSuccessRate),
			pct(m.HarmRate), pct(m.FalseBlockRate), pct(m.RecoveryRate), m.ApprovalsPerTask, m.StepsVsReference,
			m.TokensPerTask, m.CostPerTask)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Suites) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nper suite: utility / utility under attack / attack success")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"suite", "tasks"}
	for _, m := range r.Configs {
		head = append(head, r.label(m))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, s := range r.Suites {
		row := []string{s.Suite, "0"}
		for _, m := range s.Configs {
			if m.Runs == 0 {
				row = append(row, "n/a")
				continue
			}
			row[1] = fmt.Sprint(m.Tasks)
			row = append(row, fmt.Sprintf("%s / %s / %s", pct(m.Utility), attackPct(m, m.UtilityUnderAttack), attackPct(m, m.AttackSuccessRate)))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

// pct renders a fraction as a whole percentage, or with one decimal when
// rounding would hide that it is not exactly 0 or 100.
func pct(f float64) string {
	p := 100 * f
	s := fmt.Sprintf("%.0f%%", p)
	if (s == "0%" && p > 0) || (s == "100%" && p < 100) {
		s = fmt.Sprintf("%.1f%%", p)
	}
	return s
}

// attackPct is pct for a rate over attacked runs, "-" when there were none.
func attackPct(m Metrics, f float64) string {
	if m.Attacked == 0 {
		return "-"
	}
	return pct(f)
}

// label names a configuration in a column head: its guards, and its user
// when the report compares several.
func (r Report) label(m Metrics) string {
	if m.User == NoUser || m.User == "" || len(r.users()) < 2 {
		return m.Name
	}
	return m.Name + "/" + string(m.User)
}

// users returns the distinct users of the report's configurations that ask one.
func (r Report) users() []User {
	var us []User
	for _, m := range r.Configs {
		if m.User != NoUser && m.User != "" && !slices.Contains(us, m.User) {
			us = append(us, m.User)
		}
	}
	return us
}
