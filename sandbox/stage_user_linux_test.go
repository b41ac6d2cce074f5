//go:build linux

package sandbox_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
)

// TestStagedCommandHasNoCapability: a staged command holds no capability,
// although the helper that made its zygote held some to start the stager
// (as a user: ambient ones across its exec).
func TestStagedCommandHasNoCapability(t *testing.T) {
	l, work := newStaged(t)
	res, err := l.Exec(t.Context(), sandbox.Cmd{Script: "grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status; echo x > f", Dir: work, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Staged == nil {
		t.Fatal("not staged")
	}
	defer res.Staged.Discard()
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(lines) != 4 {
		t.Fatalf("status lines %q (stderr %q)", lines, res.Stderr)
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) != 2 || strings.Trim(f[1], "0") != "" {
			t.Errorf("the command holds a capability: %s", l)
		}
	}
}

// TestStagingAsUser runs the staging tests again as nobody (uid 65534),
// with REIN_REQUIRE=overlay so that a stager that cannot mount fails them
// instead of skipping: as a user, the helper's user namespace must give
// the stager what it needs to mount, and the commands nothing. The
// leftover tests run too: a user has no pids cgroup, so the zygote's own
// sweep is all that kills what a command left behind. So do the sweep
// tests: a user's sweep must give back the permissions a dead executor's
// dirs lack, through no link.
func TestStagingAsUser(t *testing.T) {
	needLandlock(t)
	if os.Geteuid() != 0 {
		testenv.Need(t, "root", errors.New("switching to another user needs root"))
	}
	setpriv, err := exec.LookPath("setpriv")
	testenv.Need(t, "setpriv", err)
	// A directory nobody can use, and the test binary where nobody can run it.
	// (t.TempDir's parent is root's alone.)
	dir, err := os.MkdirTemp("", "rein-stage-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sandbox.RemoveStageDir(dir) })
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"-test.run", "^(TestStagedWritesWaitForApply|TestStagedDiscard|TestStagedHostileWorkDir|TestStagedCommandHasNoCapability|TestStageRecycle|TestLandlockKillsWhatLeftTheGroup|TestLandlockLeftoversWaitForTheLastCommand|TestLeftoverCannotWriteLater|TestSweepHeld|TestSweepFollowsNoLink)$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "TMPDIR=" + dir, "PATH=" + os.Getenv("PATH"), "REIN_REQUIRE=overlay"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	for _, name := range []string{"TestStagedWritesWaitForApply", "TestStagedDiscard", "TestStagedHostileWorkDir", "TestStagedCommandHasNoCapability", "TestStageRecycle",
		"TestLandlockKillsWhatLeftTheGroup", "TestLandlockLeftoversWaitForTheLastCommand", "TestLeftoverCannotWriteLater",
		"TestSweepHeld", "TestSweepFollowsNoLink"} {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Errorf("as nobody, %s did not pass:\n%s", name, out)
		}
	}
}
