package fs_test

import (
	"crypto/rand"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fstool "github.com/reinhq/rein/tool/fs"
)

// FuzzToolArgs runs the file tools, with no gate in front, on arbitrary
// arguments in a work directory whose links lead out. No call may panic,
// show the outside canary or change anything outside. (Files it writes
// inside stay in the work directory, which is the tools' to change.)
func FuzzToolArgs(f *testing.F) {
	seeds := []struct {
		tool byte
		args string
	}{
		{0, `{"path":"inside.txt"}`}, {0, `{"path":"out/secret","offset":2}`}, {0, `{"path":"../outside/secret"}`},
		{0, `{"path":"secret.txt","limit":5}`}, {0, `{"path":"up/outside/secret"}`}, {0, `{"path":"/etc/passwd"}`},
		{1, `{"pattern":"**"}`}, {1, `{"pattern":"*","path":"out"}`}, {1, `{"pattern":"up/*/*"}`},
		{2, `{"pattern":"C.NARY"}`}, {2, `{"pattern":".","path":"secret.txt"}`}, {2, `{"pattern":"x","include":"**/*"}`},
		{3, `{"path":"out/new.txt","content":"x"}`}, {3, `{"path":"dangling","content":"x"}`}, {3, `{"path":"new/dir/f","content":"x"}`},
		{4, `{"path":"secret.txt","old_string":"CANARY","new_string":"x"}`}, {4, `{"path":"inside.txt","old_string":"in","new_string":"out"}`},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.args)
	}
	root, dir := workspace(f, map[string]string{"inside.txt": "inside\n", "sub/a.txt": "a\n"})
	outside := filepath.Join(filepath.Dir(dir), "outside")
	must := func(err error) {
		if err != nil {
			f.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(outside, "sub"), 0o755))
	// A canary the fuzzer cannot write into the work directory itself.
	canary := "CANARY-" + rand.Text()
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte(canary+"\n"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "sub", "deep"), []byte(canary+" deep\n"), 0o644))
	for link, target := range map[string]string{"out": outside, "secret.txt": filepath.Join(outside, "secret"), "up": "..",
		"rel": "../outside", "dangling": filepath.Join(outside, "created"), "sub/esc": "../../outside", "slash": "/"} {
		must(os.Symlink(target, filepath.Join(dir, link)))
	}
	tools := fstool.Tools(root, fstool.Options{MaxResults: 50})
	before := snapshot(f, outside)
	f.Fuzz(func(t *testing.T, which byte, args string) {
		tl := tools[int(which)%len(tools)]
		out, err := tl.Run(t.Context(), json.RawMessage(args))
		if err != nil {
			out += err.Error()
		}
		if strings.Contains(out, canary) {
			t.Fatalf("%s %s shows something outside: %.300q", tl.Spec().Name, args, out)
		}
		if tl.Spec().Name == "write_file" || tl.Spec().Name == "edit_file" {
			if after := snapshot(t, outside); !maps.Equal(before, after) {
				t.Fatalf("%s %s changed the outside directory: %v", tl.Spec().Name, args, after)
			}
		}
	})
}
