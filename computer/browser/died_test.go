package browser_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/computer/browser"
	"github.com/reinhq/rein/internal/testenv"
)

// fakeChromium writes an executable shell script and returns its path.
func fakeChromium(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "chromium")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStartSaysTheBrowserDied: a browser that exits during start-up, by
// itself or killed, is reported as the browser dying, with how it died and
// what it printed, and not as a cancelled context; a binary that cannot be
// run is not called a death.
func TestStartSaysTheBrowserDied(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		script string
		says   []string
	}{
		{"exits 1", "echo 'Fatal: no usable sandbox' >&2\nexit 1\n", []string{"exit status 1", "Fatal: no usable sandbox"}},
		{"killed", "kill -9 $$\n", []string{"signal: killed"}},
		{"closes the pipe", "exec 3<&- 4>&-\nsleep 0.2\n", []string{"died during start-up"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			exe := fakeChromium(t, tc.script)
			for _, start := range []func() error{
				func() error {
					e, err := browser.Start(t.Context(), browser.Options{Exec: exe})
					closeEngine(e)
					return err
				},
				func() error {
					b, err := browser.Launch(t.Context(), browser.Options{Exec: exe})
					closeBrowser(b)
					return err
				},
			} {
				err := start()
				if !errors.Is(err, browser.ErrDied) || errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "died") {
					t.Fatalf("err = %v, want ErrDied", err)
				}
				for _, s := range append(tc.says, "the browser (chromium) died during start-up", exe) {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error does not say %q: %v", s, err)
					}
				}
			}
		})
	}
	// Not a death: nothing to run.
	_, err := browser.Start(t.Context(), browser.Options{Exec: filepath.Join(t.TempDir(), "no-such-chromium")})
	if err == nil || errors.Is(err, browser.ErrDied) || !strings.Contains(err.Error(), "cannot run") {
		t.Errorf("missing binary: err = %v", err)
	}
}

// TestRealChromiumKilledDuringStart: a real Chromium, SIGKILLed as soon as
// it runs (long before it can be driven), makes Launch say the browser
// died, killed.
func TestRealChromiumKilledDuringStart(t *testing.T) {
	t.Parallel()
	real, err := browser.Find()
	testenv.Need(t, "chromium", err)
	pidFile := filepath.Join(t.TempDir(), "pid")
	exe := fakeChromium(t, "echo $$ > "+pidFile+".tmp && mv "+pidFile+".tmp "+pidFile+"\nexec "+real+` "$@"`+"\n")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		// Kill it once the script has become Chromium itself (Debian's
		// chromium is a shell script that execs the binary).
		for ctx.Err() == nil {
			if b, err := os.ReadFile(pidFile); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					if target, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil && strings.Contains(filepath.Base(target), "chrom") {
						_ = syscall.Kill(pid, syscall.SIGKILL)
						return
					}
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	b, err := browser.Launch(t.Context(), browser.Options{Exec: exe})
	if err == nil {
		b.Close()
		t.Fatal("Chromium started although it was killed")
	}
	if !errors.Is(err, browser.ErrDied) || !strings.Contains(err.Error(), "the browser (chromium) died during start-up") ||
		!strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("err = %v, want the browser's death", err)
	}
}

func closeEngine(e *browser.Engine) {
	if e != nil {
		e.Close()
	}
}

func closeBrowser(b *browser.Browser) {
	if b != nil {
		b.Close()
	}
}
