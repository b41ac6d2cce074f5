package harness

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/model"
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

// namedModel answers every request with "ok" and has a name.
type namedModel struct{ calls int }

func (m *namedModel) Generate(context.Context, *model.Request) (*model.Response, error) {
	m.calls++
	return &model.Response{}, nil
}

func (m *namedModel) Name() string { return "named" }

// The sandbox's hold is released by the first model request, once (a
// second request must not close it again), and the wrapped model keeps its
// name for the audit log.
func TestReleaseAtFirstCall(t *testing.T) {
	hold := make(chan struct{})
	inner := &namedModel{}
	m := releaseAtFirstCall(inner, hold)
	select {
	case <-hold:
		t.Fatal("released before any request")
	default:
	}
	for range 2 {
		if _, err := m.Generate(t.Context(), &model.Request{}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-hold:
	default:
		t.Fatal("not released by the first request")
	}
	if n, ok := m.(interface{ Name() string }); !ok || n.Name() != "named" || inner.calls != 2 {
		t.Errorf("wrapper: name %v, calls %d", n, inner.calls)
	}
}
