package docker

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
)

// testImage is the image the tests run: FROM scratch with a static busybox,
// built once per test binary run (and kept, so later runs skip the build).
const testImage = "rein-test-busybox:latest"

// busyboxPath is where Debian's busybox-static puts its binary.
const busyboxPath = "/bin/busybox"

func TestMain(m *testing.M) {
	if work := os.Getenv(helperEnv); work != "" {
		crashHelper(work)
	}
	os.Exit(m.Run())
}

var imageOnce struct {
	sync.Once
	dockerErr, busyboxErr, buildErr error
}

// needImage skips the test, or fails it where REIN_REQUIRE says docker must
// be there, unless the daemon answers and the test image exists.
func needImage(tb testing.TB) {
	tb.Helper()
	imageOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if imageOnce.dockerErr = Available(ctx, ""); imageOnce.dockerErr != nil {
			return
		}
		if exec.CommandContext(ctx, "docker", "image", "inspect", testImage).Run() == nil {
			return
		}
		if imageOnce.busyboxErr = checkStatic(busyboxPath); imageOnce.busyboxErr != nil {
			return
		}
		imageOnce.buildErr = buildImage(ctx, busyboxPath, testImage)
	})
	testenv.Need(tb, "docker", imageOnce.dockerErr)
	testenv.Need(tb, "busybox", imageOnce.busyboxErr)
	testenv.Need(tb, "docker", imageOnce.buildErr)
}

// checkStatic makes sure path is a static executable: a FROM scratch image
// has no dynamic loader.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%w (apt-get install busybox-static)", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; install busybox-static", path)
		}
	}
	return nil
}

// buildImage builds tag FROM scratch with busybox and its applets in /bin,
// the same recipe as scripts/build-test-image.
func buildImage(ctx context.Context, busybox, tag string) error {
	dir, err := os.MkdirTemp("", "rein-image")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b, err := os.ReadFile(busybox)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "busybox"), b, 0o755); err != nil {
		return err
	}
	df := "FROM scratch\nCOPY busybox /bin/busybox\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "docker", "build", "--quiet", "--tag", tag, dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker build: %w: %s", err, out)
	}
	return nil
}

// start starts an executor on a fresh work dir (or o.WorkDir) and removes
// its container when the test ends.
func start(tb testing.TB, o Options) (*Executor, string) {
	tb.Helper()
	needImage(tb)
	if o.Image == "" {
		o.Image = testImage
	}
	if o.WorkDir == "" {
		o.WorkDir = tempDir(tb)
	}
	if o.Session == "" {
		o.Session = "test-" + randomHex(4)
	}
	e, err := Start(context.Background(), o)
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() {
		if err := e.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return e, o.WorkDir
}

// tempDir is t.TempDir with its links resolved (the work dir must be a
// clean path the container can use as it is).
func tempDir(tb testing.TB) string {
	tb.Helper()
	d, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// run runs script in e's work dir and fails the test if it could not run.
func run(tb testing.TB, e *Executor, dir, script string) sandbox.Result {
	tb.Helper()
	res, err := e.Exec(context.Background(), sandbox.Cmd{Script: script, Dir: dir, Timeout: 30 * time.Second})
	if err != nil {
		tb.Fatalf("Exec(%q): %v", script, err)
	}
	return res
}

// processes lists the command lines of the processes in e's container but
// init, its sleep and the lister's own.
func processes(tb testing.TB, e *Executor, dir string) []string {
	tb.Helper()
	res := run(tb, e, dir, `for p in /proc/[0-9]*; do
	[ "$p" = /proc/$$ ] && continue
	c=$(tr '\0' ' ' <$p/cmdline 2>/dev/null) || continue
	case "$c" in ""|*"for p in /proc"*|*docker-init*|"sleep infinity ") continue;; esac
	echo "$c"
done`)
	return splitLines(res.Stdout)
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		if i > 0 {
			out = append(out, s[:i])
		}
		if i == len(s) {
			break
		}
		s = s[i+1:]
	}
	return out
}

// waitFile waits for path to appear on the host, up to d.
func waitFile(tb testing.TB, path string, d time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		} else if !errors.Is(err, os.ErrNotExist) {
			tb.Fatal(err)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s did not appear within %v", path, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
