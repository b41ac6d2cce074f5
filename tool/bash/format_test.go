package bash

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/sandbox"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/format")

func TestFormat(t *testing.T) {
	t.Parallel()
	cut := "head of the output\n[… 70000 bytes cut …]\ntail of the output"
	for _, c := range []struct {
		name    string
		res     sandbox.Result
		timeout time.Duration
	}{
		{"ok", sandbox.Result{Stdout: "a.go\nb.go\n", StdoutBytes: 10}, time.Minute},
		{"no_output", sandbox.Result{}, time.Minute},
		{"exit_nonzero", sandbox.Result{ExitCode: 2, Stderr: "ls: cannot access 'x': No such file or directory\n", StderrBytes: 49}, time.Minute},
		{"both_streams_no_newline", sandbox.Result{ExitCode: 1, Stdout: "partial", StdoutBytes: 7, Stderr: "warning", StderrBytes: 7}, time.Minute},
		{"timed_out", sandbox.Result{ExitCode: -1, Signal: "killed", TimedOut: true, Stdout: "step 1\n", StdoutBytes: 7}, 5 * time.Second},
		{"signal", sandbox.Result{ExitCode: -1, Signal: "segmentation fault"}, time.Minute},
		{"out_of_memory", sandbox.Result{ExitCode: -1, Signal: "killed", OOMKilled: true, MemoryLimit: 2 << 30, Stderr: "tail: memory exhausted\n", StderrBytes: 23}, time.Minute},
		{"cut", sandbox.Result{Stdout: cut, StdoutBytes: 70000 + int64(len(cut)), Stderr: "done\n", StderrBytes: 5}, time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := format(c.res, c.timeout)
			path := filepath.Join("testdata", "format", c.name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./tool/bash -run TestFormat -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("format =\n%s\nwant (%s)\n%s", got, path, want)
			}
			if !strings.HasSuffix(got, "\n") {
				t.Errorf("format does not end with a newline: %q", got)
			}
		})
	}
}
