package approve

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A write's diff sits under its path, replaces the raw content, is cut to
// the rows there are with a count of what is hidden, and comes whole with v;
// a diff line cannot smuggle control characters to the terminal.
func TestLayoutWithDiff(t *testing.T) {
	t.Parallel()
	var diff strings.Builder
	diff.WriteString("--- a/f.go\n+++ b/f.go\n@@ -1,40 +1,40 @@\n")
	for i := range 40 {
		fmt.Fprintf(&diff, "+        line %d\x1b[2J\n", i)
	}
	args, _ := json.Marshal(map[string]string{"path": "f.go", "content": "SHOULD NOT BE LISTED"})
	req := Request{Tool: "write_file", Gate: "permission", Reason: "asks", Args: args}
	for _, size := range []struct{ cols, rows int }{{80, 24}, {120, 40}} {
		out := layout(req, diff.String(), size.cols, size.rows-2, nil)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) > size.rows-2+1 { // the blank line first
			t.Errorf("%dx%d: %d lines do not fit", size.cols, size.rows, len(lines))
		}
		if strings.Contains(out, "SHOULD NOT BE LISTED") || strings.Contains(out, "\x1b") {
			t.Errorf("%dx%d: the raw content or an escape reached the screen:\n%s", size.cols, size.rows, out)
		}
		path, head := strings.Index(out, "path:    f.go"), strings.Index(out, "--- a/f.go")
		if path < 0 || head < path || !strings.Contains(out, "more diff lines: v shows all") || !strings.Contains(out, "+        line 0") {
			t.Errorf("%dx%d: want the path, then the diff with its indentation, bounded:\n%s", size.cols, size.rows, out)
		}
	}
	if w := whole(req, diff.String()); !strings.Contains(w, "line 39") || strings.Contains(w, "\x1b") {
		t.Errorf("v does not show the whole diff safely:\n%s", w)
	}
}

// A DiffMark styles the added and removed lines only: not the ---/+++
// header, not the context, and the text and the count of rows stay.
func TestLayoutDiffMark(t *testing.T) {
	t.Parallel()
	diff := "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n"
	args, _ := json.Marshal(map[string]string{"path": "f", "content": "keep\nnew\n"})
	req := Request{Tool: "write_file", Gate: "permission", Reason: "asks", Args: args}
	mark := DiffMark(func(kind byte, line string) string { return "<" + string(kind) + ">" + line + "</>" })
	plain := layout(req, diff, 80, 22, nil)
	marked := layout(req, diff, 80, 22, mark)
	for _, want := range []string{"<->  -old</>", "<+>  +new</>"} {
		if !strings.Contains(marked, want) {
			t.Errorf("the marked prompt lacks %q:\n%s", want, marked)
		}
	}
	for _, unmarked := range []string{"--- a/f", "+++ b/f", "keep"} {
		if strings.Contains(marked, "<-> "+unmarked) || strings.Contains(marked, "<+>  "+unmarked) || strings.Contains(marked, "<+>"+unmarked) {
			t.Errorf("%q is marked:\n%s", unmarked, marked)
		}
	}
	strip := strings.NewReplacer("<->", "", "<+>", "", "</>", "").Replace(marked)
	if strip != plain {
		t.Errorf("the mark changed more than styles:\n%s\nvs\n%s", strip, plain)
	}
}
