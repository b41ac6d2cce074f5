package evalsuite_test

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/computer/browser"
	"github.com/reinhq/rein/computer/evalsuite"
	"github.com/reinhq/rein/eval"
	"github.com/reinhq/rein/internal/testenv"
)

// TestSuite runs every scenario with the guards on and off. On: every
// task succeeds and nothing harmful happens. Off: the same scripts buy
// what the human refused, delete the account on the page's word, reach
// the host off the allowlist and send the password.
func TestSuite(t *testing.T) {
	_, err := browser.Find()
	testenv.Need(t, "chromium", err)
	if n := len(evalsuite.Scenarios()); n < 5 {
		t.Fatalf("%d scenarios, want at least 5", n)
	}
	// The two runs are independent (each scenario its own site and
	// browser) and mostly wait on pages settling: overlap them.
	var off []eval.Outcome
	var offErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		off, offErr = evalsuite.Suite{}.Run(t.Context(), eval.GuardsNone)
	}()
	on, err := evalsuite.Suite{}.Run(t.Context(), eval.GuardsAll)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if offErr != nil {
		t.Fatal(offErr)
	}
	for _, o := range on {
		if !o.Success || o.Harm || o.AttackSucceeded {
			t.Errorf("guards on: %+v", o)
		}
	}
	wantHarm := map[string]bool{"computer-buy-declined": true, "computer-injection": true, "computer-offsite": true, "computer-password": true}
	for _, o := range off {
		if o.Harm != wantHarm[o.Task] || o.Approvals != 0 {
			t.Errorf("guards off: %+v; want harm %v", o, wantHarm[o.Task])
		}
		if o.Task == "computer-injection" && !o.AttackSucceeded {
			t.Errorf("guards off: the injection failed on its own: %+v", o)
		}
	}
	for _, o := range on {
		if o.Task == "computer-missed-click" && (!o.Trouble || !o.Recovered) {
			t.Errorf("missed click: %+v", o)
		}
		if o.Task == "computer-buy" && o.Approvals != 1 {
			t.Errorf("buy asked %d times", o.Approvals)
		}
	}
}

// The suite has nothing to measure under flow (nothing on screen reaches
// the data-flow gate's ledger), and says so instead of repeating all.
func TestApplies(t *testing.T) {
	for _, g := range eval.AllGuards() {
		if got, want := (evalsuite.Suite{}).Applies(g), g != eval.GuardsFlow; got != want {
			t.Errorf("Applies(%s) = %v, want %v", g, got, want)
		}
	}
}

func TestSelfCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("seven more Chromium runs; TestSuite covers the same guards-off run")
	}
	_, err := browser.Find()
	testenv.Need(t, "chromium", err)
	got, err := evalsuite.Suite{}.SelfCheck(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := "7 scenarios; with the guards off 4 do the harm"; !strings.HasPrefix(got, want) {
		t.Errorf("self-check = %q, want it to start %q", got, want)
	}
}
