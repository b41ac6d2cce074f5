package scenario_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/eval/scenario"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestFormatErrors")

// TestFormatErrors parses each broken scenario in testdata/format and
// compares the error with its golden file: strict parsing names the line
// and column of an unknown field, and every inconsistency says what to fix.
func TestFormatErrors(t *testing.T) {
	t.Parallel()
	inputs, err := filepath.Glob("testdata/format/*.json")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs in testdata/format (%v)", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			_, perr := scenario.Parse(filepath.Base(in), data)
			if perr == nil {
				t.Fatal("Parse accepted a broken scenario")
			}
			if !errors.Is(perr, scenario.ErrFormat) {
				t.Errorf("error %v does not wrap ErrFormat", perr)
			}
			golden := strings.TrimSuffix(in, ".json") + ".golden"
			got := perr.Error() + "\n"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("error:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestParseValid checks that a minimal complete scenario parses.
func TestParseValid(t *testing.T) {
	t.Parallel()
	src := `{"suite":"mini","summary":"one task","tools":["read_file","calc"],
	"environment":{"files":{"a.txt":"2 and 3"}},
	"tasks":[{"id":"sum","task":"Add the numbers in a.txt.","reference":[{"tool":"read_file","args":{"path":"a.txt"}},{"tool":"calc","args":{"expression":"2+3"}}],
	"answer":"5","utility":[{"answer":{"number":"5"}}]}]}`
	f, err := scenario.Parse("mini.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if f.Suite != "mini" || len(f.Tasks) != 1 || len(f.Tasks[0].Reference) != 2 {
		t.Errorf("parsed %+v", f)
	}
}
