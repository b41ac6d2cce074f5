package fs_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	fstool "github.com/reinhq/rein/tool/fs"
)

// mkfifo plants a named pipe at name under dir; when the test ends, it
// opens the pipe's other end so that a reader stuck in open(2) is let go.
func mkfifo(t *testing.T, dir, name string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}

// A FIFO that a repository planted (no writer will ever come) makes no
// file tool block: each refuses it, or skips it, without opening it for
// good. The guard only stops a test that would otherwise hang.
func TestNonRegularFilesDoNotBlock(t *testing.T) {
	t.Parallel()
	root, dir := workspace(t, map[string]string{"ok.txt": "needle\n", "sub/ok.txt": "needle\n"})
	mkfifo(t, dir, "pipe")
	mkfifo(t, dir, "sub/pipe.txt")
	symlink(t, "pipe", filepath.Join(dir, "link-to-pipe"))
	sock := filepath.Join(dir, "sock")
	if l, err := net.Listen("unix", sock); err == nil {
		t.Cleanup(func() { l.Close() })
	} else {
		sock = ""
	}
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string // in the error; "" for a result that must contain result
		res  string
	}{
		{"read_file on a FIFO", "read_file", map[string]any{"path": "pipe"}, "is not a regular file (a named pipe)", ""},
		{"read_file through a link to a FIFO", "read_file", map[string]any{"path": "link-to-pipe"}, "is not a regular file (a named pipe)", ""},
		{"edit_file on a FIFO", "edit_file", map[string]any{"path": "pipe", "old_string": "a", "new_string": "b"}, "not a regular file", ""},
		{"grep naming a FIFO", "grep", map[string]any{"pattern": "needle", "path": "pipe"}, "is not a regular file (a named pipe)", ""},
		{"grep over a tree with FIFOs", "grep", map[string]any{"pattern": "needle"}, "", "sub/ok.txt:1: needle"},
		{"grep with an include that names the FIFO", "grep", map[string]any{"pattern": "needle", "include": "*.txt"}, "", "ok.txt:1: needle"},
		{"glob lists a FIFO without opening it", "glob", map[string]any{"pattern": "**/pipe*"}, "", "sub/pipe.txt"},
	}
	if sock != "" {
		tests = append(tests, struct {
			name string
			tool string
			args map[string]any
			want string
			res  string
		}{"read_file on a socket", "read_file", map[string]any{"path": "sock"}, "is not a regular file (a socket)", ""})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tl := byName(root, fstool.Options{}, tt.tool)
			type outcome struct {
				out string
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				out, err := call(t, tl, tt.args)
				done <- outcome{out, err}
			}()
			var o outcome
			select {
			case o = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s blocked", tt.tool)
			}
			if tt.want != "" {
				if o.err == nil || !strings.Contains(o.err.Error(), tt.want) {
					t.Fatalf("got %q, %v; want an error saying %q", o.out, o.err, tt.want)
				}
				if !errors.Is(o.err, fstool.ErrNotRegular) {
					t.Errorf("error %v does not wrap ErrNotRegular", o.err)
				}
				return
			}
			if o.err != nil || !strings.Contains(o.out, tt.res) {
				t.Fatalf("got %q, %v; want a result holding %q", o.out, o.err, tt.res)
			}
		})
	}
}
