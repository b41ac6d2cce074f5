package scenario_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/eval/scenario"
	"github.com/reinhq/rein/eval/suites"
)

// FuzzParse feeds the suite parser arbitrary bytes, seeded with every
// embedded suite, the held-out suite and the broken examples of
// testdata/format (more seeds in testdata/fuzz/FuzzParse). It must never
// panic; a refusal wraps ErrFormat; an accepted file, written back, parses
// again to the same file.
func FuzzParse(f *testing.F) {
	names, _ := fs.Glob(suites.FS, "*.json")
	for _, n := range names {
		data, err := fs.ReadFile(suites.FS, n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	local, _ := filepath.Glob("testdata/format/*.json")
	local = append(local, "testdata/suites/heldout.json", "testdata/suites/mcp-mini.json")
	for _, p := range local {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := scenario.Parse("fuzz.json", data)
		if err != nil {
			if !errors.Is(err, scenario.ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		back, err := json.Marshal(file)
		if err != nil {
			t.Fatalf("an accepted file does not marshal: %v", err)
		}
		again, err := scenario.Parse("fuzz.json", back)
		if err != nil {
			t.Fatalf("an accepted file, written back, is refused: %v\n%s", err, back)
		}
		if b2, _ := json.Marshal(again); string(b2) != string(back) {
			t.Fatalf("written back twice, the file changed:\n%s\n%s", back, b2)
		}
	})
}
