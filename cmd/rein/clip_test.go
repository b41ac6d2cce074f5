package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/audit"
)

// TestHugeAnswerClippedInLog: a model answering 10 MB leaves a log whose
// model_call text and stop answer are clipped (with size and SHA-256) and
// that verifies, while the user still gets the whole answer: in the text
// summary, and in the --json final object (the stream's stop event is the
// log's clipped copy, marked truncated).
func TestHugeAnswerClippedInLog(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	answer := strings.Repeat("forty-two ", 1<<20) + "END" // 10 MiB and a bit
	script, err := json.Marshal(map[string]any{"turns": []any{map[string]any{"text": answer, "usage": map[string]int{"input": 1, "output": 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	scriptPath := filepath.Join(dir, "script.json")
	if err := os.WriteFile(scriptPath, script, 0o600); err != nil {
		t.Fatal(err)
	}
	rein := func(t *testing.T, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "REIN_TEST_MAIN=1", "HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("rein %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out
	}
	for _, mode := range []string{"text", "json"} {
		t.Run(mode, func(t *testing.T) {
			auditDir := filepath.Join(dir, "audit-"+mode)
			args := []string{"run", "--model", "scripted:" + scriptPath, "--workdir", workIn(t, dir), "--audit-dir", auditDir}
			if mode == "json" {
				args = append(args, "--json")
			}
			out := rein(t, append(args, "Say it all.")...)
			if mode == "text" {
				if !bytes.Contains(out, []byte("answer: "+answer+"\n")) {
					t.Errorf("the summary does not print the whole answer (%d bytes of output)", len(out))
				}
			} else {
				lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
				var final struct {
					Answer string `json:"answer"`
				}
				if err := json.Unmarshal(lines[len(lines)-1], &final); err != nil || final.Answer != answer {
					t.Errorf("the final object's answer is %d bytes (%v), want %d", len(final.Answer), err, len(answer))
				}
			}
			logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
			if len(logs) != 1 {
				t.Fatalf("logs: %v", logs)
			}
			rein(t, "audit", "verify", logs[0])
			f, err := os.Open(logs[0])
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, audit.MaxLine)
			clipped := 0
			for sc.Scan() {
				if len(sc.Bytes()) > 64<<10 {
					t.Errorf("a %d-byte record in the log", len(sc.Bytes()))
				}
				var r audit.Record
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				if (r.Type == audit.ModelCall || r.Type == audit.Stop) && r.Truncated && r.Bytes == len(answer) && len(r.SHA256) == 64 {
					clipped++
				}
			}
			if clipped != 2 {
				t.Errorf("%d clipped model_call/stop records with size and hash, want 2", clipped)
			}
		})
	}
}
