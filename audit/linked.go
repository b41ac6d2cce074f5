package audit

import (
	"fmt"

	"github.com/reinhq/rein/internal/linkcheck"
)

// CheckLinked reports an error when the log file is no longer linked at
// the path it was opened by — deleted (with the state directory, say) or
// renamed away and replaced — so the caller can stop instead of writing
// records nobody will find. A Writer on a stream has nothing to check.
func (w *Writer) CheckLinked() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.file == nil || w.path == "" {
		return nil
	}
	if err := linkcheck.Check(w.file, w.path); err != nil {
		return fmt.Errorf("audit log: %w; rein stops, as what it did next would not be recorded", err)
	}
	return nil
}
