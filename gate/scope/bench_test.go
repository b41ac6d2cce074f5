package scope_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/reinhq/rein/gate"
)

// BenchmarkCheckPath measures one path judgement (ns/op is per path) over
// the corpus's paths and over typical legitimate ones, in a work directory
// holding every corpus link.
func BenchmarkCheckPath(b *testing.B) {
	f := newFixture(b, allLinks)
	var corpus []string
	for _, e := range loadCorpus(b) {
		var args map[string]any
		must(b, json.Unmarshal([]byte(f.expand(string(e.Args))), &args))
		if p, ok := args["path"].(string); ok {
			corpus = append(corpus, p)
		}
	}
	legit := []string{
		"inside.txt", "sub/inner.txt", "./sub/../inside.txt", "in/inner.txt", "not/there/yet.go",
		"internal/harness/harness.go", f.work + "/sub/inner.txt", f.alias + "/inside.txt",
	}
	for _, set := range []struct {
		name  string
		paths []string
	}{{"corpus", corpus}, {"legit", legit}} {
		b.Run(set.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = f.gate.CheckPath(set.paths[i%len(set.paths)])
				i++
			}
		})
	}
}

// BenchmarkCheck measures a whole gate call: arguments decoded, roles
// found, every path argument judged.
func BenchmarkCheck(b *testing.B) {
	f := newFixture(b, allLinks)
	for _, c := range []struct{ tool, args string }{
		{"read_file", `{"path":"sub/inner.txt"}`},
		{"grep", `{"pattern":"x","path":"sub","include":"*.go"}`},
		{"read_file", `{"path":"out/secret"}`},
	} {
		b.Run(fmt.Sprintf("%s %s", c.tool, c.args), func(b *testing.B) {
			b.ReportAllocs()
			tl := f.tools[c.tool]
			for b.Loop() {
				f.gate.Check(b.Context(), &gate.Call{ID: "1", Name: c.tool, Args: json.RawMessage(c.args), Tool: tl})
			}
		})
	}
}

// BenchmarkLstat is the cost of the one system call CheckPath makes per
// existing path component, to read the numbers above against.
func BenchmarkLstat(b *testing.B) {
	f := newFixture(b, "")
	b.ReportAllocs()
	for b.Loop() {
		_, _ = os.Lstat(f.work)
	}
}
