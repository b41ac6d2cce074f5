package fs

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/tool"
)

// WriteArgs are write_file's arguments.
type WriteArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Check validates the arguments' form.
func (a *WriteArgs) Check() error {
	switch {
	case a.Path == "":
		return errors.New(`"path" is required: a file path relative to the working directory`)
	case strings.HasSuffix(a.Path, "/"):
		return fmt.Errorf(`"path" %q ends with /: name a file, not a directory`, a.Path)
	}
	return nil
}

// Writer is the write_file tool. It asks for a human's yes (tool.Confirmer)
// when a call would empty a file that has content.
type Writer struct {
	*tool.Func[WriteArgs]
	w workdir
}

var _ tool.Confirmer = (*Writer)(nil)

// WriteFile returns the write_file tool: create or replace a text file.
func WriteFile(root *os.Root, o Options) *Writer {
	w := newWorkdir(root)
	schema := fmt.Sprintf(`{"type":"object","properties":{`+
		`"path":{"type":"string","minLength":1,"maxLength":4096,"description":"File path relative to the working directory, e.g. docs/notes.md"},`+
		`"content":{"type":"string","maxLength":%d,"description":"The whole new content of the file"}},`+
		`"required":["path","content"],"additionalProperties":false}`, MaxContentBytes)
	f := tool.New(tool.Spec{
		Name: "write_file",
		Description: fmt.Sprintf("Create a text file in the working directory, or replace the whole content of an existing one, with \"content\" (at most %d characters). "+
			"Missing parent directories are created. The file is replaced in one step, so readers never see half of it. "+
			"Returns whether it created or replaced the file and how many bytes it wrote. "+
			"To change part of a file, use edit_file instead; emptying a file that has content needs a human's approval. "+
			"It will not write outside the working directory or through symbolic links that lead out of it.", MaxContentBytes),
		Schema: json.RawMessage(schema),
		Effect: tool.Reversible,
		Roles:  map[string]tool.Role{"path": tool.RolePath},
	}, func(ctx context.Context, a WriteArgs) (string, error) {
		rel, err := w.rel(a.Path)
		if err != nil {
			return "", err
		}
		res, err := writeFile(ctx, root, rel, a.Path, []byte(a.Content), true)
		if err != nil {
			return "", err
		}
		if res.created {
			return fmt.Sprintf("created %s (%d bytes)", a.Path, len(a.Content)), nil
		}
		msg := fmt.Sprintf("replaced %s (%d bytes; it had %d)", a.Path, len(a.Content), res.old)
		if res.dropped != 0 {
			msg += fmt.Sprintf("; it was executable (mode %04o) and no longer is: write_file never leaves new content executable, so the user must make it executable again (chmod +x) if it should run", res.dropped|res.mode)
		}
		return msg, nil
	})
	return &Writer{Func: f, w: w}
}

// Confirm returns a reason when the call would empty a file that has
// content, else "". It changes nothing.
func (wr *Writer) Confirm(_ context.Context, args json.RawMessage) string {
	var a WriteArgs
	if err := json.Unmarshal(args, &a); err != nil || a.Content != "" {
		return ""
	}
	rel, err := wr.w.rel(a.Path)
	if err != nil {
		return ""
	}
	info, err := wr.w.root.Stat(rel)
	if err != nil || !info.Mode().IsRegular() || info.Size() == 0 {
		return ""
	}
	return fmt.Sprintf("write_file would empty %s (%d bytes)", a.Path, info.Size())
}

// EditArgs are edit_file's arguments.
type EditArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// Check validates the arguments' form.
func (a *EditArgs) Check() error {
	switch {
	case a.Path == "":
		return errors.New(`"path" is required: a file path relative to the working directory`)
	case a.OldString == "":
		return errors.New(`"old_string" is required: the exact text to replace, copied from the file; to create a file use write_file`)
	case a.OldString == a.NewString:
		return errors.New(`"old_string" and "new_string" are the same, so nothing would change; give the text that should replace old_string`)
	}
	return nil
}

// EditFile returns the edit_file tool: replace exact text in a file.
func EditFile(root *os.Root, o Options) *Editor {
	w := newWorkdir(root)
	maxBytes := o.maxBytes()
	schema := fmt.Sprintf(`{"type":"object","properties":{`+
		`"path":{"type":"string","minLength":1,"maxLength":4096,"description":"File path relative to the working directory"},`+
		`"old_string":{"type":"string","minLength":1,"maxLength":%d,"description":"The exact text to replace, including whitespace and indentation, without read_file's line numbers"},`+
		`"new_string":{"type":"string","maxLength":%d,"description":"The text to put in its place"},`+
		`"replace_all":{"type":"boolean","description":"Replace every occurrence; default false, which requires old_string to occur exactly once"}},`+
		`"required":["path","old_string","new_string"],"additionalProperties":false}`, MaxContentBytes, MaxContentBytes)
	f := tool.New(tool.Spec{
		Name: "edit_file",
		Description: "Replace exact text in an existing text file in the working directory: old_string becomes new_string. " +
			"Read the file first and copy old_string exactly, including whitespace, without the line numbers read_file adds. " +
			"old_string must occur exactly once unless replace_all is true; add surrounding lines to make it unique. " +
			"Returns how many replacements were made. The file is replaced in one step. " +
			"It will not create files (use write_file), edit binary files or touch anything outside the working directory.",
		Schema: json.RawMessage(schema),
		Effect: tool.Reversible,
		Roles:  map[string]tool.Role{"path": tool.RolePath},
	}, func(ctx context.Context, a EditArgs) (string, error) {
		rel, err := w.rel(a.Path)
		if err != nil {
			return "", err
		}
		dir, name, err := openParent(root, rel, a.Path, false)
		if err != nil {
			return "", err
		}
		defer dir.Close()
		data, err := readText(ctx, dir, name, a.Path, maxBytes)
		if err != nil {
			return "", err
		}
		text := string(data)
		n := strings.Count(text, a.OldString)
		switch {
		case n == 0:
			return "", errf(ErrNotFound, "%s: old_string not found — read the file and copy the exact text, including whitespace", a.Path)
		case n > 1 && !a.ReplaceAll:
			return "", errf(ErrNotUniq, "%s: old_string occurs %d times; add context to make it unique or set replace_all", a.Path, n)
		case !a.ReplaceAll:
			text = strings.Replace(text, a.OldString, a.NewString, 1)
		default:
			text = strings.ReplaceAll(text, a.OldString, a.NewString)
		}
		if int64(len(text)) > maxBytes {
			return "", errf(ErrTooLarge, "the edit would make %s %d bytes, more than the %s this tool handles; make a smaller change", a.Path, len(text), size(maxBytes))
		}
		if _, err := replaceIn(ctx, dir, name, a.Path, []byte(text), false); err != nil {
			return "", err
		}
		if n == 1 {
			return fmt.Sprintf("replaced 1 occurrence in %s", a.Path), nil
		}
		return fmt.Sprintf("replaced %d occurrences in %s", n, a.Path), nil
	})
	return &Editor{Func: f, w: w}
}

// written says what a write did.
type written struct {
	created bool
	old     int64       // size before, when replaced
	mode    os.FileMode // permission bits after, when replaced
	dropped os.FileMode // the execute bits taken away, when replaced
}

// writeFile writes data to rel inside root, creating parent directories
// when mkdir is set. A file it replaces loses its execute bits: content
// the model wrote whole never stays executable without the user's say
// (an overwritten hook or script would otherwise run it later).
func writeFile(ctx context.Context, root *os.Root, rel, p string, data []byte, mkdir bool) (written, error) {
	dir, name, err := openParent(root, rel, p, mkdir)
	if err != nil {
		return written{}, err
	}
	defer dir.Close()
	return replaceIn(ctx, dir, name, p, data, true)
}

// openParent opens rel's directory as a root of its own, so that later
// steps work in that directory even if its name is changed meanwhile.
func openParent(root *os.Root, rel, p string, mkdir bool) (*os.Root, string, error) {
	dirName, name := filepath.Split(rel)
	if name == "" || name == "." || name == ".." {
		return nil, "", fmt.Errorf("%s is not a file name; name a file inside the working directory", display(p))
	}
	if dirName == "" {
		dirName = "."
	}
	if mkdir && dirName != "." {
		if err := root.MkdirAll(dirName, 0o755); err != nil {
			if errors.Is(err, iofs.ErrExist) {
				return nil, "", fmt.Errorf("cannot create %s: a part of its directory is a file, not a directory; choose another path", p)
			}
			return nil, "", opErr("create the directories of", p, err)
		}
	}
	dir, err := root.OpenRoot(dirName)
	if err != nil {
		return nil, "", opErr("open the directory of", p, err)
	}
	return dir, name, nil
}

// replaceIn writes data to name in dir: through a temporary file renamed
// over it, so that readers see the old or the new content, never half; or,
// when name is a symbolic link, in place through the link (which dir
// refuses to follow out of the work directory). With dropExec, a file
// replaced loses its execute bits.
func replaceIn(ctx context.Context, dir *os.Root, name, p string, data []byte, dropExec bool) (written, error) {
	if err := ctx.Err(); err != nil {
		return written{}, err
	}
	var res written
	perm := os.FileMode(0o644)
	info, err := dir.Lstat(name)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		res.created = true
	case err != nil:
		return res, opErr("write", p, err)
	case info.Mode()&os.ModeSymlink != 0:
		return writeThrough(dir, name, p, data, dropExec)
	case info.IsDir():
		return res, errf(ErrIsDir, "%s is a directory; name a file", p)
	case !info.Mode().IsRegular():
		return res, fmt.Errorf("%s is not a regular file (%s); only regular files can be written", p, info.Mode().Type())
	default:
		res.old, perm = info.Size(), info.Mode().Perm()
		if dropExec {
			res.dropped, perm = perm&0o111, perm&^0o111
		}
		res.mode = perm
	}
	tmp := ".rein-" + rand.Text()[:16] + ".tmp"
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return res, opErr("write", p, err)
	}
	_, err = f.Write(data)
	if err == nil && !res.created {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dir.Rename(tmp, name)
	}
	if err != nil {
		dir.Remove(tmp)
		return res, opErr("write", p, err)
	}
	return res, nil
}

// writeThrough writes data to name in place, following a symbolic link
// inside the work directory. With dropExec, the file it leads to loses
// its execute bits.
func writeThrough(dir *os.Root, name, p string, data []byte, dropExec bool) (written, error) {
	var res written
	info, err := dir.Stat(name)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		res.created = true
	case err != nil:
		return res, opErr("write", p, err)
	case !info.Mode().IsRegular():
		return res, fmt.Errorf("%s leads to something that is not a regular file; only regular files can be written", p)
	default:
		res.old, res.mode = info.Size(), info.Mode().Perm()
	}
	f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return res, opErr("write", p, err)
	}
	if dropExec && !res.created {
		// Before the content goes in, so that it is never executable.
		if fi, serr := f.Stat(); serr == nil && fi.Mode().Perm()&0o111 != 0 {
			res.dropped, res.mode = fi.Mode().Perm()&0o111, fi.Mode().Perm()&^0o111
			err = f.Chmod(res.mode)
		}
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, opErr("write", p, err)
	}
	return res, nil
}
