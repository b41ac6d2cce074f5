//go:build linux

package sandbox_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
	"golang.org/x/sys/unix"
)

// hostileNames are work dir names overlayfs's legacy option string cannot
// carry as they are: its separators (, : =), its escape (\), white space,
// a line break, bytes that are not UTF-8, and what looks like options.
var hostileNames = []struct{ name, dir string }{
	{"comma", "a,b"},
	{"colon", "x:y"},
	{"equals", "k=v"},
	{"backslash", `back\slash`},
	{"space", "two words"},
	{"newline", "line\nbreak"},
	{"tab", "tab\there"},
	{"not UTF-8", "bad\xff\xfebytes"},
	{"options", "w,upperdir=x,lowerdir=y,index=on"},
	{"escaped colon", `esc\:colon`},
	{"all", "a, b:c=d\\e\nf\xff"},
}

// TestStagedHostileWorkDir stages a command in a work dir of each hostile
// name: its writes are staged (not refused, not written through), read
// back exactly, and applied.
func TestStagedHostileWorkDir(t *testing.T) {
	needLandlock(t)
	for _, c := range hostileNames {
		t.Run(c.name, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), c.dir)
			if err := os.Mkdir(work, 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(work, "old"), "o")
			write(t, filepath.Join(work, "gone"), "g")
			l := &sandbox.Landlock{WorkDir: work, Stage: true}
			t.Cleanup(func() { l.Close() })
			res, err := l.Exec(t.Context(), sandbox.Cmd{Script: "echo n > old && rm gone && echo c > 'new, file:=x' && cat old", Dir: work, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatalf("Exec: %v", err)
			}
			if err := l.StageErr(); err != nil {
				t.Fatalf("not staged: %v", err)
			}
			if res.Staged == nil || res.ExitCode != 0 || res.Stdout != "n\n" {
				t.Fatalf("staged %v, exit %d, stdout %q, stderr %q", res.Staged != nil, res.ExitCode, res.Stdout, res.Stderr)
			}
			if b, _ := os.ReadFile(filepath.Join(work, "old")); string(b) != "o" {
				t.Fatalf("the write went through before Apply: %q", b)
			}
			want := []string{"created new, file:=x", "deleted gone", "modified old"}
			if got := changes(res.Staged); !slices.Equal(got, want) {
				t.Fatalf("changes %q, want %q", got, want)
			}
			if _, err := res.Staged.Apply(nil, nil); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(work, "new, file:=x")); string(b) != "c\n" {
				t.Errorf("after Apply: %q", b)
			}
		})
	}
}

// inPrivateMountNS runs fn on a thread of its own in a new, private mount
// namespace, which ends with it.
func inPrivateMountNS(t *testing.T, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	run := func() {
		if err := unix.Unshare(unix.CLONE_FS | unix.CLONE_NEWNS); err != nil {
			done <- err
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			done <- err
			return
		}
		done <- fn()
	}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread and its namespace end here
		if unix.Gettid() != unix.Getpid() {
			run()
			return
		}
		// Never the main thread (see TestNSThreadNeverMainThread).
		locked := make(chan struct{})
		go func() { runtime.LockOSThread(); close(locked); run() }()
		<-locked
		runtime.UnlockOSThread()
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestStageMountHostileNames builds the overlay the docker backend
// attaches in a container (NewStageMount: layers by descriptor, masks
// inside before it is attached) over work dirs of each hostile name, and
// a credential file of a hostile name inside: through it the writes are
// staged, the credential reads empty, and nothing reaches the work dir.
func TestStageMountHostileNames(t *testing.T) {
	if err := sandbox.OverlayFDStatus(); err != nil {
		testenv.Need(t, "overlay", err)
	}
	for _, c := range hostileNames {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			work := filepath.Join(parent, c.dir)
			cred := filepath.Join(work, c.dir+".env")
			write(t, filepath.Join(work, "old"), "o")
			write(t, cred, "SECRET")
			empty := filepath.Join(parent, "empty")
			write(t, empty, "")
			root := filepath.Join(parent, "stage")
			if err := os.Mkdir(root, 0o700); err != nil {
				t.Fatal(err)
			}
			d, err := sandbox.NewStageDir(root)
			if err != nil {
				t.Fatal(err)
			}
			sm, err := sandbox.NewStageMount(work, d, sandbox.Masks{Files: []string{cred}}, empty, parent)
			if err != nil {
				t.Fatalf("NewStageMount: %v", err)
			}
			defer sm.Close()
			var read string
			inPrivateMountNS(t, func() error {
				if err := sm.Attach(work); err != nil {
					return err
				}
				b, err := os.ReadFile(cred)
				if err != nil {
					return err
				}
				read = string(b)
				if err := os.WriteFile(filepath.Join(work, "old"), []byte("n"), 0o644); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(work, "a,b:c"), []byte("c"), 0o644); err != nil {
					return err
				}
				return sandbox.Unmount(work)
			})
			if read != "" {
				t.Errorf("the masked credential read %q through the overlay", read)
			}
			if b, _ := os.ReadFile(filepath.Join(work, "old")); string(b) != "o" {
				t.Errorf("the write reached the work dir: %q", b)
			}
			st, err := d.Read(work)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Discard()
			if got, want := changes(st), []string{"created a,b:c", "modified old"}; !slices.Equal(got, want) {
				t.Errorf("changes %q, want %q", got, want)
			}
		})
	}
}

// TestNSThreadNeverMainThread: the threads that enter other mount
// namespaces are never the main thread, whose namespace every thread sees
// under /proc/self: after many, /proc/self/ns/mnt is still rein's.
func TestNSThreadNeverMainThread(t *testing.T) {
	if err := sandbox.OverlayFDStatus(); err != nil {
		testenv.Need(t, "overlay", err) // root, to make mount namespaces
	}
	own, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	// A mount namespace of its own, kept by an open descriptor.
	nsc := make(chan *os.File, 1)
	inPrivateMountNS(t, func() error {
		f, err := os.Open("/proc/thread-self/ns/mnt")
		nsc <- f
		return err
	})
	ns := <-nsc
	defer ns.Close()
	for i := range 200 {
		th, err := sandbox.NewNSThread(ns)
		if err != nil {
			t.Fatal(err)
		}
		if err := th.Do(func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		th.Close()
		if now, _ := os.Readlink("/proc/self/ns/mnt"); now != own {
			t.Fatalf("after %d threads the main thread is in %s, not rein's %s", i+1, now, own)
		}
	}
}
