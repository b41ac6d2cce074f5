package agent_test

import (
	"testing"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/tool"
)

// TestVerdictRecordsTheAnswer: the audit record of a call a human decided
// carries the answer (yes, scope), and the intent record after it does not.
func TestVerdictRecordsTheAnswer(t *testing.T) {
	t.Parallel()
	for _, yes := range []bool{true, false} {
		p := &probe{name: "probe", effect: tool.Irreversible}
		m := script(t, `{"turns":[{"text":"try","calls":[{"tool":"probe"}]},{"text":"done"}]}`)
		log := &memLog{}
		fixture{model: m, tools: []tool.Tool{p}, approver: approve.Fixed(yes), log: log}.loop(t).Run(t.Context(), "task")
		var verdicts, withApproval int
		for _, r := range log.recs {
			if r.Type == audit.Verdict {
				verdicts++
				if r.Approval != nil && r.Approval.Yes == yes && r.Approval.Scope == approve.Once {
					withApproval++
				}
			}
			if r.Type == audit.Intent && r.Approval != nil {
				t.Errorf("an intent record carries an approval: %+v", r)
			}
		}
		if verdicts != 1 || withApproval != 1 {
			t.Fatalf("yes=%v: %d verdicts, %d with the answer", yes, verdicts, withApproval)
		}
	}
}
