package shell

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate"
)

// FuzzProveReadOnly cross-checks the proof against the analyzer, a walker
// written apart from it: whenever a line is proven read-only, every simple
// command the analyzer finds in it, in any position (wrappers, nested
// shells, substitutions, here-documents fed to a shell), is a program on
// the proof's list, reached through no wrapper but xargs, and the analysis
// finds nothing to refuse. A position the proof forgot to look at would
// show up as a command it never judged. Seeds: both read-only corpora.
//
//	go test -run '^$' -fuzz FuzzProveReadOnly -fuzztime 1m ./gate/shell
func FuzzProveReadOnly(f *testing.F) {
	for _, name := range []string{"read.txt", "danger.txt"} {
		fh, err := os.Open(filepath.Join("testdata", "readonly", name))
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
				f.Add(strings.ReplaceAll(line, `\n`, "\n"))
			}
		}
		fh.Close()
	}
	o := Options{WorkDir: "/work/proj", Home: fakeHome, Exec: Executor{Sandboxed: true}}
	f.Fuzz(func(t *testing.T, src string) {
		p := newParser()
		file, err := p.Parse(strings.NewReader(src), "")
		if err != nil || ProveReadOnly(file) != nil {
			return
		}
		a := analyze(src, o, p)
		if a.Decision == gate.Deny {
			t.Fatalf("%q is proven read-only but the analysis refuses it: %s", src, a.Summary())
		}
		for _, c := range a.Commands {
			if _, ok := provenPrograms[c.Name]; !ok {
				t.Fatalf("%q is proven read-only but runs %q (via %v), which the proof never judged", src, c.Name, c.Via)
			}
			for _, v := range c.Via {
				if v != "xargs" {
					t.Fatalf("%q is proven read-only but runs %q through %q", src, c.Name, v)
				}
			}
		}
	})
}
