//go:build linux

package bash_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/tool/bash"
)

// End to end through the local executor.
func TestRunLocal(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	tl := bash.RunBash(&sandbox.Local{}, root, bash.Options{Env: []string{"GREETING=hi", "PATH=/usr/bin:/bin"}})
	for _, c := range []struct{ args, want string }{
		{`{"command":"echo $GREETING; echo oops >&2; exit 3"}`, "exit code: 3\nstdout:\nhi\nstderr:\noops\n"},
		{`{"command":"pwd -P","workdir":"sub"}`, "exit code: 0\nstdout:\n" + filepath.Join(real, "sub") + "\n"},
		{`{"command":"touch made && ls"}`, "exit code: 0\nstdout:\nmade\nsub\n"},
		{`{"command":"cat","timeout_s":5}`, "exit code: 0\n(no output)\n"},
	} {
		got, err := tl.Run(t.Context(), json.RawMessage(c.args))
		if err != nil {
			t.Errorf("Run(%s): %v", c.args, err)
			continue
		}
		if got != c.want {
			t.Errorf("Run(%s) =\n%s\nwant\n%s", c.args, got, c.want)
		}
	}
}
