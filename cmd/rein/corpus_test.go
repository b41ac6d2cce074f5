package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The corpora under testdata/corpus, judged the way a user would judge them:
// `rein policy check --mode bypass --workdir DIR`, one JSONL call per line.
// Bypass is the loosest mode, so what is blocked here is blocked by the hard
// gates alone. The thresholds are the issue's.

type corpusLine struct {
	Command string          `json:"command"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Setup   string          `json:"setup"`
	Expect  string          `json:"expect"`
}

func readCorpus(t *testing.T, name string) []corpusLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusLine
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c corpusLine
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("%s line %d: %v", name, i+1, err)
		}
		out = append(out, c)
	}
	return out
}

func readURLs(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			urls = append(urls, line)
		}
	}
	return urls
}

// policyCheck runs `rein policy check` over calls and returns the decisions.
func policyCheck(t *testing.T, workdir string, calls []string, extra ...string) []map[string]string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args := append([]string{"policy", "check", "--mode", "bypass", "--workdir", workdir,
		"--tools", "read_file,glob,grep,write_file,edit_file,run_bash,webfetch", "--max-tool-calls", "100000"}, extra...)
	code := run(t.Context(), args, env{stdin: strings.NewReader(strings.Join(calls, "\n") + "\n"), stdout: &stdout, stderr: &stderr})
	if code != 0 {
		t.Fatalf("policy check exited %d: %s", code, stderr.String())
	}
	var out []map[string]string
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v map[string]string
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if len(out) != len(calls) {
		t.Fatalf("%d verdicts for %d calls", len(out), len(calls))
	}
	return out
}

func bashCall(t *testing.T, command string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"tool": "run_bash", "args": map[string]string{"command": command}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func emptyHome(t *testing.T) {
	t.Setenv("HOME", "/home/agent")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

func TestCorpusShell(t *testing.T) {
	emptyHome(t)
	workdir := t.TempDir()
	for _, c := range []struct {
		file    string
		blocked bool
		min     float64
		atLeast int
	}{
		{"shell-dangerous.jsonl", true, 0.98, 150},
		{"shell-benign.jsonl", false, 0.95, 60},
	} {
		lines := readCorpus(t, c.file)
		if len(lines) < c.atLeast {
			t.Fatalf("%s has %d commands, want at least %d", c.file, len(lines), c.atLeast)
		}
		calls := make([]string, len(lines))
		for i, l := range lines {
			calls[i] = bashCall(t, l.Command)
		}
		verdicts := policyCheck(t, workdir, calls)
		hits := 0
		for i, v := range verdicts {
			blocked := v["decision"] != "allow"
			if blocked == c.blocked {
				hits++
			} else {
				t.Logf("%s: %s: %q (%s: %s)", c.file, v["decision"], lines[i].Command, v["gate"], v["reason"])
			}
		}
		rate := float64(hits) / float64(len(lines))
		t.Logf("%s: %d of %d (%.1f%%) judged as they should be", c.file, hits, len(lines), 100*rate)
		if rate < c.min {
			t.Errorf("%s: %.1f%%, want at least %.0f%%", c.file, 100*rate, 100*c.min)
		}
	}
}

func TestCorpusURLs(t *testing.T) {
	emptyHome(t)
	workdir := t.TempDir()
	for _, c := range []struct {
		file    string
		blocked bool
		atLeast int
	}{
		{"url-internal.txt", true, 80},
		{"url-public.txt", false, 10},
	} {
		urls := readURLs(t, c.file)
		if len(urls) < c.atLeast {
			t.Fatalf("%s has %d URLs, want at least %d", c.file, len(urls), c.atLeast)
		}
		calls := make([]string, len(urls))
		for i, u := range urls {
			b, _ := json.Marshal(map[string]any{"tool": "webfetch", "args": map[string]string{"url": u}})
			calls[i] = string(b)
		}
		for i, v := range policyCheck(t, workdir, calls) {
			if (v["decision"] != "allow") != c.blocked {
				t.Errorf("%s: %s %q (%s: %s)", c.file, v["decision"], urls[i], v["gate"], v["reason"])
			}
		}
	}
}

// pathLinks are the symbolic links the path corpus's setups name, all made at
// once (gate/scope's tests make them one setup at a time). $OUT is the
// outside directory, $WORK the work directory.
var pathLinks = [][2]string{
	{"out", "$OUT"}, {"secret.txt", "$OUT/secret"}, {"a", "b"}, {"b", "$OUT"}, {"root", "/"},
	{"up", ".."}, {"up2", "../.."}, {"rel", "../outside"}, {"in", "sub"}, {"sub/out", "$OUT"},
	{"sub/esc", "../../outside"}, {"loop", "loop"}, {"new.txt", "$OUT/new.txt"}, {"newdir", "$OUT/newdir"},
	{"inner-link.txt", "sub/inner.txt"}, {"abs-in", "$WORK/sub"},
}

func TestCorpusPaths(t *testing.T) {
	emptyHome(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, alias, outside := filepath.Join(base, "work"), filepath.Join(base, "alias"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(work, "sub"), filepath.Join(outside, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{"work/inside.txt": "in\n", "work/sub/inner.txt": "in\n", "outside/secret": "secret\n"} {
		if err := os.WriteFile(filepath.Join(base, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(work, alias); err != nil {
		t.Fatal(err)
	}
	repl := strings.NewReplacer("$OUTSIDE", outside, "$OUT", outside, "$WORK_ALIAS", alias, "$WORK", work)
	for _, l := range pathLinks {
		if err := os.Symlink(repl.Replace(l[1]), filepath.Join(work, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	var calls []string
	var lines []corpusLine
	for _, l := range readCorpus(t, "path-escapes.jsonl") {
		if l.Expect != "deny" {
			continue
		}
		b, _ := json.Marshal(map[string]any{"tool": l.Tool, "args": json.RawMessage(repl.Replace(string(l.Args)))})
		calls = append(calls, string(b))
		lines = append(lines, l)
	}
	if len(calls) < 40 {
		t.Fatalf("%d path escapes, want at least 40", len(calls))
	}
	for i, v := range policyCheck(t, alias, calls) {
		if v["decision"] == "allow" {
			t.Errorf("allowed: %s %s (setup %q)", lines[i].Tool, lines[i].Args, lines[i].Setup)
		}
	}
	t.Logf("%d path escapes, every one refused", len(calls))
}
