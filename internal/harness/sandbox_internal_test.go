package harness

import (
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/sandbox"
)

// With no sandbox and none asked for, commands are refused, not run.
func TestUnavailableRefuses(t *testing.T) {
	t.Parallel()
	_, err := unavailable{errors.New("kernel too old")}.Exec(t.Context(), sandbox.Cmd{Script: "true"})
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "kernel too old") || !strings.Contains(err.Error(), "--sandbox none") {
		t.Fatal(err)
	}
}

func TestOpenExecutorRefusesBadChoices(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    Sandbox
		want string
	}{
		{Sandbox{Backend: "chroot"}, `unknown sandbox "chroot"`},
		{Sandbox{Backend: SandboxDocker}, "needs --image"},
	} {
		if _, _, _, err := OpenExecutor(t.Context(), c.s, t.TempDir(), "20261202T100000Z-0badcafe"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c.s, err)
		}
	}
}
