package computer_test

import (
	"context"
	"fmt"
	"image"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/computer"
)

// A computer-use session over an environment (computer/browser in real
// use; here a fake screen with a Pay button) and a scripted vision model.
// The click on Pay is irreversible because of what the element says, so
// the approver is asked; it says no, and the model, told so, ends the task.
func Example() {
	var log []string
	env := &fakeEnv{log: &log, button: image.Rect(10, 10, 20, 20), elements: map[computer.Kind]computer.Element{
		computer.Click: {Found: true, Tag: "button", Texts: []string{"Pay 129 kr"}}}}
	s, err := computer.ParseScript([]byte(`{"steps":[
		{"action":"click","x":15,"y":15,"why":"Pay."},
		{"action":"done","summary":"I did not pay: the payment was declined."}]}`))
	if err != nil {
		panic(err)
	}
	session, err := computer.New(computer.Config{Model: computer.NewScripted(s), Env: env, Approver: approve.Fixed(false)})
	if err != nil {
		panic(err)
	}
	res := session.Run(context.Background(), "Buy the mug.")
	for _, t := range computer.Turns(res.Messages) {
		fmt.Printf("%s refused=%v\n", t.Action, t.Refused)
	}
	fmt.Println(res.Stop, res.Approvals, res.Declined(), res.Actions)
	fmt.Println(res.Answer)
	// Output:
	// click(15,15) refused=true
	// done 1 true 0
	// I did not pay: the payment was declined.
}
