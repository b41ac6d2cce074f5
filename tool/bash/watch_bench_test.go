package bash

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/protect"
)

// BenchmarkWatch is the watch's cost per command (a snapshot before, a
// compare after) on a repository-shaped work dir: 600 source files in 30
// directories, a .git with 400 objects, hooks and config.
// Run: go test -run '^$' -bench Watch -count 5 ./tool/bash
func BenchmarkWatch(b *testing.B) {
	dir := b.TempDir()
	write := func(p, body string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 600 {
		write(fmt.Sprintf("pkg%d/file%d.go", i%30, i), "package x\n")
	}
	for i := range 400 {
		write(fmt.Sprintf(".git/objects/%02x/%038x", i%256, i), "blob")
	}
	for _, h := range []string{"pre-commit.sample", "pre-push.sample", "commit-msg.sample", "update.sample"} {
		write(".git/hooks/"+h, "#!/bin/sh\n")
	}
	write(".git/config", "[core]\n\tbare = false\n")
	write(".bashrc", "# rc\n")
	w := &watch{root: dir, list: protect.Default()}
	b.ReportAllocs()
	for b.Loop() {
		before := w.snapshot()
		if note := w.undo(before); note != "" {
			b.Fatal(note)
		}
	}
}
