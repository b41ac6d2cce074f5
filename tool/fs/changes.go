package fs

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reinhq/rein/tool"
)

// Editor is the edit_file tool. It names the file a call would change
// (tool.Changer), as write_file does, so that rein can save it first.
type Editor struct {
	*tool.Func[EditArgs]
	w workdir
}

var (
	_ tool.Changer = (*Writer)(nil)
	_ tool.Changer = (*Editor)(nil)
)

// Changes returns the file a write_file call may create or replace: its
// path, cleaned and relative to the working directory. It changes nothing.
func (wr *Writer) Changes(args json.RawMessage) ([]string, error) {
	var a WriteArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("%w for write_file: %w", tool.ErrArgs, err)
	}
	return changed(wr.w, a.Path)
}

// Changes returns the file an edit_file call may change: its path,
// cleaned and relative to the working directory. It changes nothing.
func (ed *Editor) Changes(args json.RawMessage) ([]string, error) {
	var a EditArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("%w for edit_file: %w", tool.ErrArgs, err)
	}
	return changed(ed.w, a.Path)
}

// changed is the one path p names, relative to the work directory; the
// errors are those the tool itself would give.
func changed(w workdir, p string) ([]string, error) {
	if p == "" {
		return nil, errors.New(`"path" is required: a file path relative to the working directory`)
	}
	rel, err := w.rel(p)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, fmt.Errorf("%s is the working directory itself; name a file inside it", p)
	}
	return []string{rel}, nil
}
