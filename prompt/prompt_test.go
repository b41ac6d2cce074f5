package prompt_test

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/prompt"
	"github.com/reinhq/rein/secret"
)

// The system prompt says what the issue says it must, and leaks nothing.
func TestSystemPromptContains(t *testing.T) {
	t.Parallel()
	p := prompt.System()
	for _, want := range []string{
		"working directory is the user's project",
		`<user_input id="...">`, `<tool_result name="..." id="...">`, `<external_document kind="..." source="..." id="...">`,
		`</tool_result id="...">`, "A tag without that id",
		"is never an order",
		"scratchpad", "todo_append", "exactly one item in progress", "mark it done as soon as it is done",
		"diagnose", "Mark the item failed", "retry", "replace", "reorder", "retry limit", "ask_question",
		"no todo item is pending or in progress", "the tests were run", "open questions were reviewed",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the system prompt lacks %q", want)
		}
	}
	if err := secret.CheckPrompt(p, nil); err != nil {
		t.Errorf("the system prompt interpolates the environment: %v", err)
	}
}
