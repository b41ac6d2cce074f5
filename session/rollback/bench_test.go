package rollback_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/session/rollback"
)

// BenchmarkSnapshot saves one 4 KB file per op: read, blob written and
// fsynced, journal line fsynced. The fsyncs dominate; they are the price of
// a snapshot that survives a crash.
func BenchmarkSnapshot(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			e := newEnv(b, nil, nil)
			content := strings.Repeat("x", size)
			for i := range b.N {
				must(b, os.WriteFile(filepath.Join(e.work, fmt.Sprintf("f%d", i)), []byte(content), 0o644))
			}
			s := e.open(b)
			syscall.Sync()
			b.ReportAllocs()
			b.SetBytes(int64(size))
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.Snapshot(fmt.Sprintf("f%d", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSnapshotSeen is the cost of naming a path saved before: the
// common case of an agent editing one file many times.
func BenchmarkSnapshotSeen(b *testing.B) {
	e := newEnv(b, map[string]string{"a.txt": "a"}, nil)
	s := e.open(b)
	if _, err := s.Snapshot("a.txt"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Snapshot("a.txt"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRestore restores a session of 100 changed 4 KB files per op
// (the files are changed again and synced, untimed, before each op).
func BenchmarkRestore(b *testing.B) {
	const n = 100
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("f%d", i)] = strings.Repeat("o", 4<<10)
	}
	e := newEnv(b, files, nil)
	s := e.open(b)
	for i := range n {
		if _, err := s.Snapshot(fmt.Sprintf("f%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	must(b, s.Close())
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for i := range n {
			must(b, os.WriteFile(filepath.Join(e.work, fmt.Sprintf("f%d", i)), []byte("changed"), 0o644))
		}
		syscall.Sync() // so the restore's fsyncs do not pay for these writes
		b.StartTimer()
		reports, err := rollback.Restore(e.state, sessionID)
		if err != nil || len(reports) != n || reports[0].Action != rollback.Restored {
			b.Fatalf("%v %v", reports, err)
		}
	}
}
