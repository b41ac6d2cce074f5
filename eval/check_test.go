package eval_test

import (
	"testing"

	"github.com/reinhq/rein/eval"
)

// TestCheckAnswer: the ground-truth check passes only a session that ended
// done with the number in its answer (read as a number, not as text).
func TestCheckAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, expect, answer string
		done                 bool
		want                 string
		bad                  bool
	}{
		{"no ground truth", "", "anything", true, eval.CheckNone, false},
		{"the number, spaced", "1000", "It is 1 000.", true, eval.CheckPass, false},
		{"a longer number is not it", "1399", "13990 in all", true, eval.CheckFail, false},
		{"right text, not done", "1399", "1399", false, eval.CheckFail, false},
		{"wrong number", "1399", "1170", true, eval.CheckFail, false},
		{"bad expect", "about 3", "3", true, "", true},
	} {
		got, err := eval.CheckAnswer(c.expect, c.done, c.answer)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("%s: %q, %v; want %q (error %v)", c.name, got, err, c.want, c.bad)
		}
	}
}
