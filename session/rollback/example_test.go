package rollback_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/session/rollback"
)

// The loop's part: save each path before the tool that changes it runs.
// The user's part, later: restore.
func Example() {
	base, _ := os.MkdirTemp("", "rollback-example")
	defer os.RemoveAll(base)
	work, state := filepath.Join(base, "work"), filepath.Join(base, "state")
	os.Mkdir(work, 0o755)
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("milk\n"), 0o644)

	store, err := rollback.Open(state, "20261202T140501Z-3fa9c2d1", work)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range []string{"notes.txt", "new.txt"} {
		id, err := store.Snapshot(p)
		fmt.Println(p, id, err)
	}
	// The tools run: one file changed, one created.
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("oat milk\n"), 0o644)
	os.WriteFile(filepath.Join(work, "new.txt"), []byte("new\n"), 0o644)
	store.Close()

	reports, err := rollback.Restore(state, "20261202T140501Z-3fa9c2d1")
	for _, r := range reports {
		fmt.Println(r.Action, r.Path)
	}
	data, _ := os.ReadFile(filepath.Join(work, "notes.txt"))
	fmt.Printf("%q %v\n", data, err)
	// Output:
	// notes.txt 000001 <nil>
	// new.txt 000002 <nil>
	// deleted new.txt
	// restored notes.txt
	// "milk\n" <nil>
}
