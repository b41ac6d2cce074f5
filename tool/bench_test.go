package tool_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/tool"
)

// BenchmarkDecode measures what one call's arguments cost to accept, over
// the shell corpus as run_bash calls. raw is the decode Run does from the
// bytes (schema check of a fresh parse, then a strict typed decode): what
// the loop paid again for every call before it ran the gates' value.
// parsed is Decode of arguments already parsed, as the validation gate
// does it once per call; RunDecoded then decodes nothing.
//
//	go test -run '^$' -bench Decode -benchmem ./tool
func BenchmarkDecode(b *testing.B) {
	reg, err := harness.Tools(harness.Env{})
	if err != nil {
		b.Fatal(err)
	}
	t, ok := reg.Lookup("run_bash")
	if !ok {
		b.Skip("no run_bash")
	}
	d := t.(tool.Decoder)
	var docs [][]byte
	var vals []any
	for _, f := range []string{"shell-dangerous.jsonl", "shell-benign.jsonl"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", f))
		if err != nil {
			b.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			var l struct {
				Command string `json:"command"`
			}
			if json.Unmarshal([]byte(line), &l) != nil || l.Command == "" {
				continue
			}
			doc, _ := json.Marshal(map[string]string{"command": l.Command})
			var v any
			_ = json.Unmarshal(doc, &v)
			docs, vals = append(docs, doc), append(vals, v)
		}
	}
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_ = t.(tool.Validator).Validate(docs[i%len(docs)])
		}
	})
	b.Run("parsed", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			k := i % len(docs)
			_, _ = d.Decode(docs[k], vals[k])
		}
	})
}
