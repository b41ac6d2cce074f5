package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startServe runs rein serve in the background on state and returns its
// address and a stop function that waits for it to end.
func startServe(t *testing.T, tokenFile, state string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	served := make(chan int, 1)
	go func() {
		served <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--token-file", tokenFile,
			"--state-dir", filepath.Join(state, "serve"), "--audit-dir", filepath.Join(state, "audit")},
			env{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard})
		pw.Close()
	}()
	first, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("rein serve printed no address: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return strings.TrimSpace(first), func() {
		cancel()
		select {
		case <-served:
		case <-time.After(30 * time.Second):
			t.Fatal("rein serve did not stop")
		}
	}
}

// TestServeDayCapStopsCLIRuns: rein run --approvals URL spends the
// server's budget. A per-day cost cap (the user's [budget], priced by the
// user's [prices]) lets the first run spend it and stops the second before
// its first model call, with stop reason budget naming the day cap; after
// the server restarts on the same state a third run is stopped too; rein
// cost prints the ledger from the server and from the file; a run that
// points at a server that is gone fails closed.
func TestServeDayCapStopsCLIRuns(t *testing.T) {
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	// 100 + 20 tokens at $10 per million: $0.0012, over the $0.001 cap.
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"done","usage":{"input":100,"output":20}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "[budget]\nday_max_cost_usd = 0.001\ntenant = \"nightly\"\n\n[prices.\"scripted:" + script + "\"]\ninput = 10\noutput = 10\n"
	if err := os.MkdirAll(filepath.Join(cfgHome, "rein"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgHome, "rein", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("cli-ledger-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "w")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	rein := func(args ...string) (int, string, string) {
		var stdout, stderr strings.Builder
		code := run(t.Context(), args, env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr})
		return code, stdout.String(), stderr.String()
	}
	runAt := func(base string) (int, string, string) {
		return rein("run", "--workdir", work, "--model", "scripted:"+script, "--audit-dir", filepath.Join(dir, "cli-audit"),
			"--approvals", base, "--approvals-token-file", tokenFile, "--json", "Say done")
	}
	stopped := func(code int, stdout, stderr string) {
		t.Helper()
		if code != exitStopped || !strings.Contains(stdout, `"stop":"budget"`) || !strings.Contains(stderr+stdout, "day cost cap reached: $0.0012 used of $0.0010") ||
			!strings.Contains(stderr+stdout, "resets at") {
			t.Fatalf("want stop budget on the day cap, exit %d:\n%s\n%s", code, stdout, stderr)
		}
	}

	base, stop := startServe(t, tokenFile, dir)
	if code, stdout, stderr := runAt(base); code != exitOK {
		t.Fatalf("the first run, under the cap: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stopped(runAt(base))
	code, out, errOut := rein("cost", "--server", base, "--token-file", tokenFile, "--json")
	var rep struct {
		Days []struct {
			Day     string
			Calls   int
			CostUSD float64 `json:"cost_usd"`
		}
		Sessions []struct{ Session, Tenant string }
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Days) != 1 || rep.Days[0].Calls != 1 ||
		len(rep.Sessions) != 1 || rep.Sessions[0].Tenant != "nightly" {
		t.Fatalf("rein cost --server: exit %d %s %s", code, out, errOut)
	}
	if rep.Days[0].CostUSD < 0.00119 || rep.Days[0].CostUSD > 0.00121 {
		t.Errorf("the day cost $%f, want $0.0012", rep.Days[0].CostUSD)
	}
	// While the server holds the file, reading it says to ask the server.
	ledgerFile := filepath.Join(dir, "serve", "ledger.db")
	if code, _, errOut := rein("cost", "--ledger", ledgerFile); code != exitUsage || !strings.Contains(errOut, "--server") {
		t.Errorf("rein cost beside a running server: exit %d %s", code, errOut)
	}
	stop()

	code, out, errOut = rein("cost", "--ledger", ledgerFile)
	if code != exitOK || !strings.Contains(out, "nightly") || !strings.Contains(out, rep.Sessions[0].Session) || !strings.Contains(out, "all sessions $0.00") {
		t.Errorf("rein cost --ledger: exit %d\n%s%s", code, out, errOut)
	}
	// A server restarted on the same state still holds the day spent.
	base, stop = startServe(t, tokenFile, dir)
	stopped(runAt(base))
	stop()

	// The server is gone: the run fails closed, before any model call.
	code, stdout, stderr := runAt(base)
	if code != exitError || !strings.Contains(stdout+stderr, "cannot be reached") || !strings.Contains(stdout+stderr, "fail closed") {
		t.Errorf("a run pointing at a dead server: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
