package tui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxHistory is how many messages a History keeps; older ones are dropped
// when the file is rewritten.
const MaxHistory = 1000

// History is the list of messages sent at the chat's prompt, oldest
// first, kept in a file (one JSON string a line, so a message of several
// lines stays one entry) that later runs read back. A History is not safe
// for concurrent use.
type History struct {
	path    string
	entries []string
	lines   int // lines in the file, kept ones or not
}

// OpenHistory reads the history kept at path; a missing file is an empty
// history. Lines that are not a JSON string (a file written by something
// else, a torn last line) are skipped.
func OpenHistory(path string) (*History, error) {
	h := &History{path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("read the chat history: %w (remove %s to start a new one)", err, path)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		h.lines++
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			h.entries = append(h.entries, s)
		}
	}
	if len(h.entries) > MaxHistory {
		h.entries = h.entries[len(h.entries)-MaxHistory:]
	}
	return h, nil
}

// Entries returns the messages, oldest first.
func (h *History) Entries() []string {
	if h == nil {
		return nil
	}
	return h.entries
}

// Add records msg (not when it repeats the last one) and appends it to
// the file, which is created private (0600: messages may hold what the
// user would not show). When the file has grown past twice MaxHistory
// lines it is rewritten with the last MaxHistory entries.
func (h *History) Add(msg string) error {
	if h == nil || msg == "" || (len(h.entries) > 0 && h.entries[len(h.entries)-1] == msg) {
		return nil
	}
	h.entries = append(h.entries, msg)
	if h.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("keep the chat history: %w", err)
	}
	line, _ := json.Marshal(msg) // a string always encodes
	h.lines++
	if len(h.entries) > MaxHistory {
		h.entries = h.entries[len(h.entries)-MaxHistory:]
	}
	if h.lines > 2*MaxHistory {
		h.lines = len(h.entries)
		var b bytes.Buffer
		for _, e := range h.entries {
			l, _ := json.Marshal(e)
			b.Write(append(l, '\n'))
		}
		tmp := h.path + ".tmp"
		if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
			return fmt.Errorf("keep the chat history: %w", err)
		}
		if err := os.Rename(tmp, h.path); err != nil {
			return fmt.Errorf("keep the chat history: %w", err)
		}
		return nil
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("keep the chat history: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("keep the chat history: %w", err)
	}
	return nil
}
