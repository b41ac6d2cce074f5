package plan_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/tool/plan"
)

func Example() {
	s := plan.New()
	tools := map[string]func(string) string{}
	for _, tl := range s.Tools(approve.Unanswered{}) {
		tools[tl.Spec().Name] = func(args string) string {
			out, err := tl.Run(context.Background(), json.RawMessage(args))
			if err != nil {
				return "error: " + err.Error()
			}
			return out
		}
	}
	fmt.Println(tools["todo_append"](`{"items":[{"id":"read","title":"Read the file"},{"id":"sum","title":"Add up"}]}`))
	fmt.Println(tools["todo_update"](`{"id":"read","status":"in_progress"}`))
	fmt.Println(tools["todo_update"](`{"id":"sum","status":"in_progress"}`))
	fmt.Println(tools["ask_question"](`{"question":"Include VAT?"}`))
	// Output:
	// Added 2 pending item(s): read, sum. The list has 2 item(s).
	// read: pending -> in_progress.
	// error: another item is in progress: read is in progress; finish or fail read first (set it to done, failed or cancelled), then start sum
	// No answer: nobody answered the question. Do not wait for one; decide with what you have or stop and say what you need.
}
