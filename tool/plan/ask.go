package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/tool"
)

// NoAnswer is what the model is told when its question goes unanswered.
const NoAnswer = "No answer: nobody answered the question. Do not wait for one; decide with what you have or stop and say what you need."

// askArgs are ask_question's arguments.
type askArgs struct {
	Question string `json:"question"`
}

// Check refuses a question of nothing but spaces.
func (a *askArgs) Check() error {
	if strings.TrimSpace(a.Question) == "" {
		return fmt.Errorf(`"question" is blank: write the question you need answered`)
	}
	return nil
}

var askSchema = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
	`"question":{"type":"string","minLength":1,"maxLength":%d,"description":"One clear question, with the context the user needs to answer it"}},`+
	`"required":["question"],"additionalProperties":false}`, MaxQuestion))

func askQuestion(asker approve.Asker) tool.Tool {
	return tool.New(tool.Spec{
		Name: "ask_question",
		Description: "Ask the user a question when you cannot go on without their decision or a fact only they know. " +
			"Ask only what you need; an answer may not come, and then you must decide with what you have or stop and say what you need.",
		Schema: askSchema,
		Effect: tool.ReadOnly,
	}, func(ctx context.Context, a askArgs) (string, error) {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("%s: %w", NoAnswer, err)
		}
		answer, err := asker.Ask(ctx, a.Question)
		if cerr := ctx.Err(); cerr != nil {
			return "", fmt.Errorf("%s: %w", NoAnswer, cerr)
		}
		if err != nil || strings.TrimSpace(answer) == "" {
			return NoAnswer, nil
		}
		return "The user answered: " + answer, nil
	})
}
