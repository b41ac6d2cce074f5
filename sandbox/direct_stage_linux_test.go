//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/gate/cmdline"
	"github.com/reinhq/rein/internal/testenv"
)

// A direct command that cannot be exec'd runs again through the shell,
// staged again: the first attempt's stage dir is not left behind.
func TestDirectFallbackLeavesNoStage(t *testing.T) {
	_, err := LandlockStatus()
	testenv.Need(t, "landlock", err)
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "bad.sh"), []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := &Landlock{WorkDir: work, Stage: true, Simple: cmdline.Simple}
	t.Cleanup(func() { l.Close() })
	for range 3 {
		res, err := l.Exec(t.Context(), Cmd{Script: "./bad.sh", Dir: work})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 127 || res.Staged == nil {
			t.Fatalf("exit %d, staged %v: want bash's 127 for a missing interpreter, staged", res.ExitCode, res.Staged != nil)
		}
		if err := res.Staged.Discard(); err != nil {
			t.Fatal(err)
		}
	}
	st, err := l.setup()
	if err != nil {
		t.Fatal(err)
	}
	st.removing.Wait()
	l.inflight.Done()
	left, err := os.ReadDir(st.stageRoot)
	if err != nil || len(left) != len(st.free) || len(left) > maxFreeStages {
		t.Errorf("stage dirs left: %v, %v; kept for the next command: %v", left, err, st.free)
	}
}
