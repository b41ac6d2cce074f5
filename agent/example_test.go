package agent_test

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/model/scripted"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/calc"
	"github.com/reinhq/rein/tool/mail"
)

// Embedding the loop: a scripted model asks for a sum and then tries to send
// mail; calc runs, send_email needs a human's yes and the approver says no.
func Example() {
	s, err := scripted.Parse([]byte(`{"turns":[
	  {"text":"Adding up.","calls":[{"tool":"calc","args":{"expression":"3*45 + 2*120"}}]},
	  {"text":"Reporting.","calls":[{"tool":"send_email","args":{"to":"boss@example.com","body":"375"}}]},
	  {"text":"The total is 375."}]}`))
	if err != nil {
		panic(err)
	}
	outbox := &mail.Outbox{}
	tools, err := tool.NewRegistry(calc.New(), mail.SendEmail(outbox))
	if err != nil {
		panic(err)
	}
	loop, err := agent.New(agent.Config{
		Model: scripted.New("example", s),
		Tools: tools,
		Gates: gate.NewPipeline(approve.Deny{}, // the default: no one said yes
			gate.NewAvailability([]string{"calc", "send_email"}), gate.Validation{}, gate.Confirm{}),
		Limits: budget.Defaults(),
	})
	if err != nil {
		panic(err)
	}
	res := loop.Run(context.Background(), "Add up the order and tell my boss.")
	fmt.Println(res.Stop, res.Steps, res.Answer)
	fmt.Println("refused by approval:", res.Refusals["approval"], "outbox:", outbox.Len())
	// Output:
	// done 3 The total is 375.
	// refused by approval: 1 outbox: 0
}
