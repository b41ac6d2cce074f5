package model_test

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/model"
)

func TestUniqueCallIDs(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", model.MaxCallIDLen)
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"unique stays", []string{"a", "b"}, []string{"a", "b"}},
		{"second renamed", []string{"a", "a"}, []string{"a", "a_2"}},
		{"suffix taken later", []string{"a", "a", "a_2"}, []string{"a", "a_3", "a_2"}},
		{"three of one", []string{"a", "a", "a"}, []string{"a", "a_2", "a_3"}},
		{"empty ids", []string{"", ""}, []string{"", "_2"}},
		{"long id shortened", []string{long, long}, []string{long, long[:model.MaxCallIDLen-2] + "_2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var blocks []model.Block
			for _, id := range tc.in {
				blocks = append(blocks, model.TextBlock("t"), model.CallBlock(model.ToolCall{ID: id, Name: "n"}))
			}
			blocks = append(blocks, model.Block{Kind: model.KindOpaque})
			second := blocks[3].Call // a renamed call is a copy: the original is not changed
			model.UniqueCallIDs(blocks)
			var got []string
			for _, c := range (&model.Response{Blocks: blocks}).Calls() {
				got = append(got, c.ID)
				if len(c.ID) > model.MaxCallIDLen {
					t.Errorf("id %q is longer than %d", c.ID, model.MaxCallIDLen)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("ids %q, want %q", got, tc.want)
			}
			if second.ID != tc.in[1] {
				t.Errorf("the original call was changed to %q", second.ID)
			}
			// Deterministic: a second pass changes nothing.
			if again := model.UniqueCallIDs(blocks); len(again) != 0 {
				t.Errorf("second pass renamed %v", again)
			}
		})
	}
}
