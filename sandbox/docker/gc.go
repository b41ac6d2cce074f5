package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/reinhq/rein/sandbox"
)

// owner identifies the rein process that starts a container.
type owner struct {
	pid   int
	host  string
	boot  string // empty where unknown
	start string
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// GC removes the containers rein started whose rein process is gone: it
// crashed or was killed before it could remove them. Containers of live rein
// processes, of other machines, and those whose labels are too few to
// judge are left alone. It returns the ids it removed; an error says what
// could not be listed or removed.
func GC(ctx context.Context, runtime string) (removed []string, err error) {
	if runtime == "" {
		runtime = DefaultRuntime
	}
	rt, err := exec.LookPath(runtime)
	if err != nil {
		return nil, fmt.Errorf("%w: container runtime %q: %w", sandbox.ErrUnsupported, runtime, err)
	}
	env := clientEnv(os.Environ())
	out, err := runClient(ctx, rt, env, "ps", "--all", "--quiet", "--no-trunc", "--filter", "label="+LabelSession)
	if err != nil {
		return nil, fmt.Errorf("listing rein's containers: %w", err)
	}
	ids := strings.Fields(out)
	if len(ids) == 0 {
		return nil, nil
	}
	out, err = runClient(ctx, rt, env, append([]string{"inspect", "--type=container", "--"}, ids...)...)
	if err != nil && out == "" { // one that vanished meanwhile fails the call but not the others
		return nil, fmt.Errorf("inspecting rein's containers: %w", err)
	}
	var infos []struct {
		ID     string `json:"Id"`
		Config struct {
			Labels map[string]string
		}
	}
	if err := json.Unmarshal([]byte(out), &infos); err != nil {
		return nil, fmt.Errorf("inspecting rein's containers: %w", err)
	}
	self := currentOwner()
	var errs []error
	for _, c := range infos {
		if _, ok := c.Config.Labels[LabelSession]; !ok || self.alive(c.Config.Labels) {
			continue
		}
		if _, err := runClient(ctx, rt, env, "rm", "-f", c.ID); err != nil && !isNoSuchContainer(err) {
			errs = append(errs, fmt.Errorf("removing container %s: %w", c.ID, err))
			continue
		}
		removed = append(removed, c.ID)
	}
	return removed, errors.Join(errs...)
}

// Available reports whether runtime (empty means docker) is installed and
// its daemon answers, with the reason when not, wrapping
// sandbox.ErrUnsupported. For `rein sandbox doctor`.
func Available(ctx context.Context, runtime string) error {
	if runtime == "" {
		runtime = DefaultRuntime
	}
	rt, err := exec.LookPath(runtime)
	if err != nil {
		return fmt.Errorf("%w: %s is not installed (or not on PATH): %w", sandbox.ErrUnsupported, runtime, err)
	}
	if _, err := runClient(ctx, rt, clientEnv(os.Environ()), "version"); err != nil {
		return fmt.Errorf("%w: %s cannot reach its daemon: %w", sandbox.ErrUnsupported, runtime, err)
	}
	return nil
}
