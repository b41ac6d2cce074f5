package main

// End-to-end tests of the rein command: testscript scripts in
// testdata/script, each running the real binary (this test binary, started as
// "rein") in a fresh $WORK with its own HOME and XDG directories.
//
// Run one script with: go test ./cmd/rein -run TestScript/NAME
// Rewrite the golden files of failing cmp lines with: go test ./cmd/rein -u

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/computer/browser"
	"github.com/reinhq/rein/internal/testenv"
	"github.com/reinhq/rein/sandbox"
	"github.com/reinhq/rein/sandbox/docker"
)

var update = flag.Bool("u", false, "update testscript golden output")

func TestMain(m *testing.M) {
	if sandbox.IsHelper() { // the landlock sandbox re-executes this binary as its helper
		os.Exit(sandbox.HelperMain(os.Args[2:]))
	}
	if os.Getenv("REIN_TEST_MAIN") == "1" { // a test runs this binary as rein (crash test)
		main()
		return
	}
	// The tests that call run in this process get a state dir of their
	// own; the scripts' rein processes get theirs from setup.
	testscript.Main(isolated{m}, map[string]func(){"rein": main})
}

// isolated runs the tests with XDG_STATE_HOME at a temporary directory.
type isolated struct{ m *testing.M }

func (i isolated) Run() int { return testenv.IsolateState(i.m) }

func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup:               setup,
		Condition:           condition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":    cmdExitcode,
			"lines":       cmdLines,
			"countfiles":  cmdCountfiles,
			"jsonfield":   cmdJSONField,
			"jsonkeys":    cmdJSONKeys,
			"jsonenv":     cmdJSONEnv,
			"jsonpluck":   cmdJSONPluck,
			"jsonfind":    cmdJSONFind,
			"auditcheck":  cmdAuditCheck,
			"eventcheck":  cmdEventCheck,
			"superlinear": cmdSuperlinear,
		},
	})
}

// setup gives every script a home of its own under $WORK, so no test reads
// the user's configuration or writes into the user's state directory:
//
//	HOME             $WORK/home
//	XDG_CONFIG_HOME  $WORK/home/.config   (user config: rein/config.toml)
//	XDG_STATE_HOME   $WORK/home/.local/state  (default audit dir: rein/audit)
//	OPENAI_FAKE_URL  a local Chat Completions server (fakeopenai_test.go)
//	OTLP_FAKE_URL    a local OTLP/HTTP traces receiver writing $WORK/otlp-spans.txt (fakeotlp_test.go)
func setup(e *testscript.Env) error {
	home := filepath.Join(e.WorkDir, "home")
	e.Setenv("HOME", home)
	e.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	e.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	startFakeOpenAI(e)
	startFakeOTLP(e)
	return os.MkdirAll(home, 0o755)
}

// condition answers the scripts' machine conditions: [chromium] is true
// when Chromium is installed. Missing where REIN_REQUIRE demands it, the
// condition is an error, so CI cannot pass by skipping.
func condition(cond string) (bool, error) {
	switch cond {
	case "chromium":
		_, err := browser.Find()
		if err != nil && testenv.Required("chromium") {
			return false, fmt.Errorf("chromium is required here (REIN_REQUIRE=%s) but unavailable: %w", os.Getenv("REIN_REQUIRE"), err)
		}
		return err == nil, nil
	case "stage":
		err := sandbox.StageStatus()
		if err != nil && testenv.Required("overlay") {
			return false, fmt.Errorf("overlay is required here (REIN_REQUIRE=%s) but unavailable: %w", os.Getenv("REIN_REQUIRE"), err)
		}
		return err == nil, nil
	case "dockerstage":
		// The docker backend can stage here and the test image is built
		// (scripts/build-test-image).
		err := docker.StageStatus()
		if err == nil {
			err = testImage()
		}
		if err != nil && testenv.Required("docker") {
			return false, fmt.Errorf("docker staging is required here (REIN_REQUIRE=%s) but unavailable: %w", os.Getenv("REIN_REQUIRE"), err)
		}
		return err == nil, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// testImage makes sure the docker sandbox's test image is there: built
// when missing, with scripts/build-test-image (sandbox/docker's tests may
// be building it at the same moment: a second build of the tag is harmless).
func testImage() error {
	if exec.Command("docker", "image", "inspect", "rein-test-busybox").Run() == nil {
		return nil
	}
	if out, err := exec.Command("../../scripts/build-test-image").CombinedOutput(); err != nil {
		return fmt.Errorf("the test image rein-test-busybox is missing and could not be built: %w: %s", err, out)
	}
	return nil
}

// exitcode N PROG [ARG...] runs PROG like exec, so stdout and stderr can be
// checked after it, and fails unless it exits with status N.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode (give the expected status instead)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad status %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		got = ee.ExitCode()
	default:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// lines FILE N checks that FILE (or stdout, stderr) has exactly N lines; a
// last line without a newline counts.
func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: lines FILE N")
	}
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("lines: bad count %q", args[1])
	}
	got := len(splitLines(ts.ReadFile(args[0])))
	if (got == want) == neg {
		ts.Fatalf("%s has %d line(s), want %s%d", args[0], got, not(neg), want)
	}
}

// countfiles DIR N checks that DIR holds exactly N entries; a directory that
// does not exist holds none.
func cmdCountfiles(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: countfiles DIR N")
	}
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("countfiles: bad count %q", args[1])
	}
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		ts.Fatalf("countfiles: %v", err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if (len(names) == want) == neg {
		ts.Fatalf("%s holds %d entries %q, want %s%d", args[0], len(names), names, not(neg), want)
	}
}

// jsonfield FILE KEY [OP] WANT checks a field of the last line of FILE (or
// stdout), a JSON object. OP is = (the default), !=, ~ (WANT is a regexp
// matched against the value), or <, <=, >, >= (numbers). Strings are compared
// without their quotes, other values as compact JSON.
func cmdJSONField(ts *testscript.TestScript, neg bool, args []string) {
	op := "="
	switch len(args) {
	case 3:
	case 4:
		op = args[2]
		args = []string{args[0], args[1], args[3]}
	default:
		ts.Fatalf("usage: jsonfield FILE KEY [OP] WANT")
	}
	file, key, want := args[0], args[1], args[2]
	obj := lastObject(ts, file)
	raw, ok := obj[key]
	if !ok {
		if neg {
			return
		}
		ts.Fatalf("%s: the last line has no %q field", file, key)
	}
	got := render(raw)
	var match bool
	switch op {
	case "=":
		match = got == want
	case "!=":
		match = got != want
	case "~":
		re, err := regexp.Compile(want)
		ts.Check(err)
		match = re.MatchString(got)
	case "<", "<=", ">", ">=":
		g, err1 := strconv.ParseFloat(got, 64)
		w, err2 := strconv.ParseFloat(want, 64)
		if err1 != nil || err2 != nil {
			ts.Fatalf("jsonfield: %s %s %s: not numbers", got, op, want)
		}
		match = map[string]bool{"<": g < w, "<=": g <= w, ">": g > w, ">=": g >= w}[op]
	default:
		ts.Fatalf("jsonfield: unknown operator %q", op)
	}
	if match == neg {
		ts.Fatalf("%s: %s is %q, want %s%s %q", file, key, got, not(neg), op, want)
	}
}

// jsonkeys FILE KEY... checks that the last line of FILE is a JSON object
// with exactly these keys, in any order.
func cmdJSONKeys(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: jsonkeys FILE KEY...")
	}
	obj := lastObject(ts, args[0])
	var got []string
	for k := range obj {
		got = append(got, k)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(args[1:]))
	if slices.Equal(got, want) == neg {
		ts.Fatalf("%s: keys %q, want %s%q", args[0], got, not(neg), want)
	}
}

// jsonenv FILE KEY VAR sets the environment variable VAR to the KEY field of
// the last line of FILE.
func cmdJSONEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonenv FILE KEY VAR")
	}
	raw, ok := lastObject(ts, args[0])[args[1]]
	if !ok {
		ts.Fatalf("%s: the last line has no %q field", args[0], args[1])
	}
	ts.Setenv(args[2], render(raw))
}

// jsonpluck FILE KEY... prints, for every line of FILE (a JSON object per
// line), the values of KEYs separated by spaces, "-" for a missing one, so a
// stream can be compared with a golden file: jsonpluck ... then cmp stdout.
func cmdJSONPluck(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: jsonpluck FILE KEY...")
	}
	for _, obj := range objects(ts, args[0]) {
		vals := make([]string, len(args)-1)
		for i, k := range args[1:] {
			vals[i] = "-"
			if raw, ok := obj[k]; ok {
				vals[i] = render(raw)
			}
		}
		fmt.Fprintln(ts.Stdout(), strings.Join(vals, " "))
	}
}

// jsonfind FILE COND... checks that some line of FILE (a JSON object per
// line) meets every condition: KEY=VALUE (the value, rendered as by
// jsonfield, equals VALUE) or KEY~REGEXP. With !, that no line meets them all.
func cmdJSONFind(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: jsonfind FILE KEY=VALUE|KEY~REGEXP...")
	}
	type cond struct {
		key, want string
		re        *regexp.Regexp
	}
	var conds []cond
	for _, a := range args[1:] {
		i := strings.IndexAny(a, "=~")
		if i <= 0 {
			ts.Fatalf("jsonfind: condition %q: want KEY=VALUE or KEY~REGEXP", a)
		}
		c := cond{key: a[:i], want: a[i+1:]}
		if a[i] == '~' {
			re, err := regexp.Compile(c.want)
			ts.Check(err)
			c.re = re
		}
		conds = append(conds, c)
	}
	found := 0
	for _, obj := range objects(ts, args[0]) {
		ok := true
		for _, c := range conds {
			raw, has := obj[c.key]
			got := render(raw)
			if !has || (c.re == nil && got != c.want) || (c.re != nil && !c.re.MatchString(got)) {
				ok = false
				break
			}
		}
		if ok {
			found++
		}
	}
	switch {
	case found == 0 && !neg:
		ts.Fatalf("%s: no line has %s", args[0], strings.Join(args[1:], " "))
	case found > 0 && neg:
		ts.Fatalf("%s: %d line(s) have %s", args[0], found, strings.Join(args[1:], " "))
	}
}

// auditcheck [-final] FILE checks that FILE is a whole audit log: one record
// per line, seq 1, 2, 3…, one session, session_start first and stop last, and
// each record's prev the SHA-256 of the line before it (the first: the
// session's anchor). With -final, FILE is a `rein run --json` stream: the
// records, then one final object that names the same session.
func cmdAuditCheck(ts *testscript.TestScript, neg bool, args []string) {
	final := len(args) == 2 && args[0] == "-final"
	if final {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: auditcheck [-final] FILE")
	}
	data := ts.ReadFile(args[0])
	if !strings.HasSuffix(data, "\n") {
		ts.Fatalf("%s does not end with a newline: a record was cut", args[0])
	}
	lines := splitLines(data)
	finalSession := ""
	if final {
		if len(lines) == 0 {
			ts.Fatalf("%s is empty", args[0])
		}
		var f struct {
			Session string `json:"session"`
			Type    *string
		}
		last := lines[len(lines)-1]
		lines = lines[:len(lines)-1]
		if err := json.Unmarshal([]byte(last), &f); err != nil || f.Type != nil || f.Session == "" {
			ts.Fatalf("%s: the last line is not a final object: %s", args[0], last)
		}
		finalSession = f.Session
	}
	if len(lines) < 2 {
		ts.Fatalf("%s: %d record(s); a whole log has at least session_start and stop", args[0], len(lines))
	}
	var session, prev string
	for i, line := range lines {
		var r struct {
			Seq     uint64 `json:"seq"`
			Session string `json:"session"`
			Type    string `json:"type"`
			Prev    string `json:"prev"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			ts.Fatalf("%s:%d: %v", args[0], i+1, err)
		}
		if i == 0 {
			session, prev = r.Session, audit.Anchor(r.Session)
		}
		switch {
		case r.Seq != uint64(i+1):
			ts.Fatalf("%s:%d: seq %d, want %d", args[0], i+1, r.Seq, i+1)
		case r.Session != session:
			ts.Fatalf("%s:%d: session %q, want %q", args[0], i+1, r.Session, session)
		case r.Prev != prev:
			ts.Fatalf("%s:%d: prev %s, want %s: the chain is broken", args[0], i+1, r.Prev, prev)
		case i == 0 && r.Type != "session_start":
			ts.Fatalf("%s:1: type %q, want session_start", args[0], r.Type)
		case i == len(lines)-1 && r.Type != "stop":
			ts.Fatalf("%s:%d: type %q, want stop as the last record", args[0], i+1, r.Type)
		}
		sum := sha256.Sum256([]byte(line))
		prev = hex.EncodeToString(sum[:])
	}
	if final && finalSession != session {
		ts.Fatalf("%s: the final object names session %q, the records %q", args[0], finalSession, session)
	}
}

// eventcheck FILE checks that FILE is a `rein run --json` stream: events
// of the known kinds (text, tool_call, verdict, result, stop), all of one
// session, each tool_call followed by its verdict, a stop event before the
// end, then one final object that names the same session and an audit log
// that is whole (as auditcheck checks it).
func cmdEventCheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: eventcheck FILE")
	}
	objs := objects(ts, args[0])
	if len(objs) < 2 {
		ts.Fatalf("%s: %d line(s); a stream has at least a stop event and the final object", args[0], len(objs))
	}
	final := objs[len(objs)-1]
	if _, ok := final["type"]; ok {
		ts.Fatalf("%s: the last line is an event, not the final object", args[0])
	}
	session := render(final["session"])
	kinds := map[string]bool{"text": true, "tool_call": true, "verdict": true, "result": true, "stop": true}
	pendingCall := ""
	for i, e := range objs[:len(objs)-1] {
		kind := render(e["type"])
		switch {
		case !kinds[kind]:
			ts.Fatalf("%s:%d: unknown event type %q", args[0], i+1, kind)
		case render(e["session"]) != session:
			ts.Fatalf("%s:%d: session %s, the final object names %s", args[0], i+1, render(e["session"]), session)
		case pendingCall != "" && (kind != "verdict" || render(e["call_id"]) != pendingCall):
			ts.Fatalf("%s:%d: a %s event follows tool_call %s, want its verdict", args[0], i+1, kind, pendingCall)
		}
		pendingCall = ""
		if kind == "tool_call" {
			pendingCall = render(e["call_id"])
		}
	}
	if last := render(objs[len(objs)-2]["type"]); last != "stop" {
		ts.Fatalf("%s: the last event is %s, want stop", args[0], last)
	}
	cmdAuditCheck(ts, false, []string{render(final["audit"])})
}

// stepLine is a trace line "step N |  T tokens | text".
var stepLine = regexp.MustCompile(`^step (\d+) \|\s+(\d+) tokens \|`)

// superlinear FILE HEADER finds, in a trace, the block that starts with the
// line beginning with HEADER and ends at the next empty line, and checks that
// the cumulative token counts of its step lines grow faster than linearly:
// each step adds more tokens than the one before (the conversation, resent
// every step, keeps growing). It needs at least three steps.
func cmdSuperlinear(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: superlinear FILE HEADER")
	}
	var counts []int64
	in := false
	for _, line := range strings.Split(ts.ReadFile(args[0]), "\n") {
		if !in {
			in = strings.HasPrefix(line, args[1])
			continue
		}
		if line == "" {
			break
		}
		m := stepLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if step, _ := strconv.Atoi(m[1]); step != len(counts)+1 {
			ts.Fatalf("step %d follows step %d", step, len(counts))
		}
		n, _ := strconv.ParseInt(m[2], 10, 64)
		counts = append(counts, n)
	}
	if !in {
		ts.Fatalf("%s: no line begins with %q", args[0], args[1])
	}
	ts.Logf("token counts: %v", counts)
	if len(counts) < 3 {
		ts.Fatalf("%d step line(s) under %q; want at least 3", len(counts), args[1])
	}
	for i := 2; i < len(counts); i++ {
		before, now := counts[i-1]-counts[i-2], counts[i]-counts[i-1]
		if now <= before {
			ts.Fatalf("step %d added %d tokens, step %d added %d: not growing faster than linearly", i, before, i+1, now)
		}
	}
}

// lastObject returns the last line of file parsed as a JSON object.
func lastObject(ts *testscript.TestScript, file string) map[string]json.RawMessage {
	objs := objects(ts, file)
	if len(objs) == 0 {
		ts.Fatalf("%s is empty; want a JSON object", file)
	}
	return objs[len(objs)-1]
}

// objects parses every line of file as a JSON object.
func objects(ts *testscript.TestScript, file string) []map[string]json.RawMessage {
	var objs []map[string]json.RawMessage
	for i, line := range splitLines(ts.ReadFile(file)) {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &obj); err != nil || obj == nil {
			ts.Fatalf("%s:%d: not a JSON object (%v): %s", file, i+1, err, line)
		}
		objs = append(objs, obj)
	}
	return objs
}

// render gives a JSON value as text: a string without quotes, anything else
// as compact JSON.
func render(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// splitLines splits text into lines without their newlines.
// splitLines returns the lines of s, without the audit log's padding lines
// (only spaces: the Writer's page alignment, not records).
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if !audit.Padding([]byte(l)) {
			out = append(out, l)
		}
	}
	return out
}

func not(neg bool) string {
	if neg {
		return "not "
	}
	return ""
}
