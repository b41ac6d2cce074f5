//go:build linux

package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/netguard"
	"github.com/reinhq/rein/sandbox"
)

// serveProbe is a long-lived program for Landlock.Start's tests: it reads
// one request a line ("read PATH", "write PATH", "dial ADDR", "env NAME")
// and answers each on one line, "ok …" or "refused: …", until stdin ends.
func serveProbe(in io.Reader, out io.Writer) int {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		op, arg, _ := strings.Cut(sc.Text(), " ")
		var err error
		answer := ""
		switch op {
		case "read":
			var b []byte
			b, err = os.ReadFile(arg)
			answer = strings.TrimSpace(string(b))
		case "write":
			err = os.WriteFile(arg, []byte("x"), 0o600)
		case "dial":
			var c net.Conn
			if c, err = net.Dial("tcp", arg); err == nil {
				c.Close()
			}
		case "env":
			answer = os.Getenv(arg)
		case "get": // through the proxy of HTTP_PROXY, as most programs do
			var resp *http.Response
			if resp, err = http.Get(arg); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				answer = fmt.Sprintf("%d %d bytes", resp.StatusCode, len(b))
			}
		default:
			err = fmt.Errorf("unknown request %q", op)
		}
		if err != nil {
			fmt.Fprintf(out, "refused: %v\n", err)
		} else {
			fmt.Fprintf(out, "ok %s\n", answer)
		}
	}
	return 0
}

// TestStartConfinesProgram starts a long-lived program in the sandbox and
// talks to it over its pipes, trying what an MCP server of ill will would:
// every request outside its own directory and the work dir's reading is
// refused, the legitimate ones work, and the pipes stay usable between
// requests.
func TestStartConfinesProgram(t *testing.T) {
	l, work := newLandlock(t, &sandbox.Landlock{})
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("project notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, ".env"), []byte("API_KEY=sk-live-123"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	secretFile := filepath.Join(outside, "credentials")
	if err := os.WriteFile(secretFile, []byte("hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	own := t.TempDir()
	stderr := &syncWriter{w: &strings.Builder{}}
	p, err := l.Start(context.Background(), sandbox.Program{
		Path: os.Args[0], Dir: own, Stderr: stderr,
		Env: []string{"REIN_SANDBOX_PROBE=serve", "PATH=/usr/bin:/bin", "HOME=/root", "TMPDIR=/tmp"},
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Kill()
	r := bufio.NewReader(p.Stdout)
	ask := func(req string) string {
		t.Helper()
		if _, err := fmt.Fprintln(p.Stdin, req); err != nil {
			t.Fatalf("writing %q: %v", req, err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the answer to %q: %v (stderr: %s)", req, err, stderr.String())
		}
		return strings.TrimSpace(line)
	}
	for _, c := range []struct {
		name, req, want string
	}{
		{"reads the work dir", "read " + filepath.Join(work, "notes.txt"), "ok project notes"},
		{"writes its own dir", "write " + filepath.Join(own, "state.json"), "ok"},
		{"HOME is its own dir", "env HOME", "ok " + realPath(t, own)},
		{"TMPDIR is its own dir", "env TMPDIR", "ok " + realPath(t, own)},
		{"reads a file outside", "read " + secretFile, "refused"},
		{"reads a credential file in the work dir", "read " + filepath.Join(work, ".env"), "!sk-live"},
		{"writes the work dir", "write " + filepath.Join(work, "planted"), "refused"},
		{"writes outside", "write " + filepath.Join(outside, "planted"), "refused"},
		{"dials a host port", "dial " + ln.Addr().String(), "refused"},
		{"reads /etc/shadow", "read /etc/shadow", "refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ask(c.req)
			if absent, ok := strings.CutPrefix(c.want, "!"); ok {
				if strings.Contains(got, absent) {
					t.Errorf("%s: got %q, which holds %q", c.req, got, absent)
				}
				return
			}
			if !strings.HasPrefix(got, c.want) || (c.want == "ok" && got != "ok") {
				t.Errorf("%s: got %q, want %q…", c.req, got, c.want)
			}
		})
	}
	for _, f := range []string{filepath.Join(work, "planted"), filepath.Join(outside, "planted")} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after a refused write: %v", f, err)
		}
	}
	// Closing stdin ends it, as an MCP server ends when its client goes.
	p.Stdin.Close()
	<-p.Done()
	if err := p.Err(); err != nil {
		t.Errorf("the program ended with %v, want a clean exit", err)
	}
}

// TestStartProgramEgress: under the executor's network policy "proxy" a
// program reaches an allowed host through the egress proxy and nothing
// else: not a host off the list, not the host directly.
func TestStartProgramEgress(t *testing.T) {
	needLandlock(t)
	blob := make([]byte, 4096)
	host, accepted := testHost(t, blob, filepath.Join(t.TempDir(), "ca-bundle.txt"))
	proxy, err := egress.New(egress.Config{
		Allow: []string{"files.test"},
		Guard: &netguard.Policy{Resolver: staticResolver{"files.test": host.Addr, "unlisted.test": host.Addr}},
	})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := newLandlock(t, &sandbox.Landlock{Net: sandbox.NetProxy, Egress: proxy})
	p, err := l.Start(t.Context(), sandbox.Program{Path: os.Args[0], Dir: t.TempDir(),
		Env: []string{"REIN_SANDBOX_PROBE=serve", "PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Kill()
	r := bufio.NewReader(p.Stdout)
	for _, c := range []struct{ req, want string }{
		{"get http://files.test/blob", "ok 200 4096 bytes"},
		{"get http://unlisted.test/blob", "ok 403"},
		{"dial " + host.Addr.String() + ":80", "refused"},
	} {
		if _, err := fmt.Fprintln(p.Stdin, c.req); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", c.req, err)
		}
		if got := strings.TrimSpace(line); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s = %q, want %q…", c.req, got, c.want)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("the test host accepted %d connections, want 1 (the allowed download)", n)
	}
}

// TestStartRefuses: a Program the sandbox cannot start as given is
// refused before anything runs.
func TestStartRefuses(t *testing.T) {
	l, _ := newLandlock(t, &sandbox.Landlock{})
	home, _ := os.UserHomeDir()
	for _, c := range []struct {
		name string
		prog sandbox.Program
		want error
	}{
		{"relative program", sandbox.Program{Path: "probe", Dir: t.TempDir()}, sandbox.ErrInvalid},
		{"relative dir", sandbox.Program{Path: os.Args[0], Dir: "state"}, sandbox.ErrInvalid},
		{"home as its dir", sandbox.Program{Path: os.Args[0], Dir: home}, sandbox.ErrInvalid},
		{"reads the home dir", sandbox.Program{Path: os.Args[0], Dir: t.TempDir(), Read: []string{home}}, sandbox.ErrInvalid},
		{"reads ~/.ssh", sandbox.Program{Path: os.Args[0], Dir: t.TempDir(), Read: []string{filepath.Join(home, ".ssh")}}, sandbox.ErrInvalid},
		{"reads /", sandbox.Program{Path: os.Args[0], Dir: t.TempDir(), Read: []string{"/"}}, sandbox.ErrInvalid},
		{"no such program", sandbox.Program{Path: "/nonexistent/server", Dir: t.TempDir()}, sandbox.ErrStart},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := l.Start(context.Background(), c.prog)
			if err == nil {
				p.Kill()
			}
			if !errors.Is(err, c.want) {
				t.Errorf("Start(%+v) = %v, want %v", c.prog, err, c.want)
			}
		})
	}
}

// TestStartProgramFailsToExec: a program the helper cannot exec (not
// executable) is an ErrStart with the helper's reason, and Close does not
// wait for it.
func TestStartProgramFailsToExec(t *testing.T) {
	l, _ := newLandlock(t, &sandbox.Landlock{})
	dir := t.TempDir()
	notExec := filepath.Join(dir, "server")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := l.Start(context.Background(), sandbox.Program{Path: notExec, Dir: t.TempDir()})
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "exec") {
		t.Errorf("Start = %v, want ErrStart naming the exec", err)
	}
}

// syncWriter serialises writes to w and reads of it.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
