package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/internal/udiff"
)

// maxDiffFile is the largest file an approval prompt reads to show a diff.
const maxDiffFile = 1 << 20

// approvalDiff returns a function that shows what a write_file or
// edit_file call would change in workdir as a unified diff, for the
// approval prompt (approve.TTY.Diff). It reads through os.Root, so a path
// that leads out of the work dir shows nothing; a file too large, not
// text, or an edit whose old_string is not there shows a one-line note.
func approvalDiff(workdir string) func(approve.Request) string {
	return func(req approve.Request) string {
		if req.Tool != "write_file" && req.Tool != "edit_file" {
			return ""
		}
		rel, ok := changedPath(workdir, req.Tool, req.Args)
		if !ok {
			return ""
		}
		root, err := os.OpenRoot(workdir)
		if err != nil {
			return ""
		}
		defer root.Close()
		old, exists, note := readForDiff(root, rel)
		if note != "" {
			return note + "\n"
		}
		var next string
		switch req.Tool {
		case "write_file":
			var a struct {
				Content string `json:"content"`
			}
			if json.Unmarshal(req.Args, &a) != nil {
				return ""
			}
			next = a.Content
		case "edit_file":
			var a struct {
				Old        string `json:"old_string"`
				New        string `json:"new_string"`
				ReplaceAll bool   `json:"replace_all"`
			}
			if json.Unmarshal(req.Args, &a) != nil || a.Old == "" {
				return ""
			}
			n := strings.Count(old, a.Old)
			switch {
			case !exists:
				return fmt.Sprintf("(%s does not exist: the edit will fail)\n", rel)
			case n == 0:
				return fmt.Sprintf("(old_string is not in %s: the edit will fail)\n", rel)
			case a.ReplaceAll:
				next = strings.ReplaceAll(old, a.Old, a.New)
			default:
				next = strings.Replace(old, a.Old, a.New, 1)
			}
		}
		d := udiff.Unified(rel, old, next)
		if d == "" {
			return "(no change: the file already holds this)\n"
		}
		return d
	}
}

// readForDiff reads rel for a diff: its text and whether it exists, or a
// note saying why no diff can be shown.
func readForDiff(root *os.Root, rel string) (text string, exists bool, note string) {
	info, err := root.Stat(rel)
	switch {
	case err != nil && os.IsNotExist(err):
		return "", false, ""
	case err != nil:
		return "", false, ""
	case !info.Mode().IsRegular():
		return "", true, fmt.Sprintf("(%s is not a regular file: no diff)", rel)
	case info.Size() > maxDiffFile:
		return "", true, fmt.Sprintf("(%s is %d bytes: too large to diff here)", rel, info.Size())
	}
	data, err := fs.ReadFile(root.FS(), rel)
	if err != nil {
		return "", true, ""
	}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return "", true, fmt.Sprintf("(%s is not text: no diff)", rel)
	}
	return string(data), true, ""
}
