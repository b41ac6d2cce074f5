package desk_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/desk"
)

func Example() {
	s := desk.Demo()
	status := desk.OrderStatus(s)
	out, _ := status.Run(context.Background(), json.RawMessage(`{"order_id":"ZAM-4471"}`))
	fmt.Print(out)
	// The existence gate asks the tool before it runs.
	err := status.(tool.Exister).Exists(context.Background(), json.RawMessage(`{"order_id":"ZAM-9999"}`))
	fmt.Println(err)
	out, _ = desk.SendReply(s).Run(context.Background(), json.RawMessage(`{"address":"kontakt@firma.pl","body":"Your order has shipped."}`))
	fmt.Println(out, len(s.Replies()))
	// Output:
	// order ZAM-4471
	// status: shipped
	// customer: kontakt@firma.pl
	// note: handed to the courier; delivery in 1 to 2 working days
	// order ZAM-9999 does not exist: check the number with the customer's message and do not retry the same number
	// Sent the reply to kontakt@firma.pl. 1
}
