package cmdline_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate/cmdline"
	"github.com/reinhq/rein/internal/testenv"
)

// simpleCases: lines that bash runs as their words, and lines where the
// shell does more (nil: not simple).
var simpleCases = []struct {
	src  string
	want []string
}{
	{`true`, []string{"true"}},
	{`false`, []string{"false"}},
	{`ls -la`, []string{"ls", "-la"}},
	{`  go   test ./...  `, []string{"go", "test", "./..."}},
	{`'true'`, []string{"true"}},
	{`'git' 'commit' '-m' 'a b  c'`, []string{"git", "commit", "-m", "a b  c"}},
	{`grep "a b" x.go`, []string{"grep", "a b", "x.go"}},
	{`printenv ''`, []string{"printenv", ""}},
	{`./build.sh --out=dist a=b x:y`, []string{"./build.sh", "--out=dist", "a=b", "x:y"}},
	{`/usr/bin/env`, []string{"/usr/bin/env"}},
	{`cat 'it''s'`, []string{"cat", "its"}},
	{"ls # a comment", []string{"ls"}},
	{"ls -l\n", []string{"ls", "-l"}},
	{"ls;", []string{"ls"}},
	{"'else' x", nil},
	{`python3 -c 'print(1); import os'`, []string{"python3", "-c", "print(1); import os"}},

	// The shell acts on these: expansions, globs, braces, tildes, escapes.
	{`ls *.go`, nil},
	{`ls file?`, nil},
	{`ls [ab]`, nil},
	{`echo{,x} a`, nil},
	{`cp a{1,2}`, nil},
	{`ls ~`, nil},
	{`ls ~/x`, nil},
	{`env a=~/x`, nil},
	{`ls x:~`, nil},
	{`ls $HOME`, nil},
	{`ls "$HOME"`, nil},
	{`ls "a\"b"`, nil},
	{`ls $(pwd)`, nil},
	{"ls `pwd`", nil},
	{`ls $((1+1))`, nil},
	{`ls $'a\tb'`, nil},
	{`ls $"x"`, nil},
	{`c\url x`, nil},
	{`ls a\ b`, nil},
	{`ls <(true)`, nil},
	// Operators, redirections, assignments, more than one command.
	{`true; true`, nil},
	{`true && ls`, nil},
	{`ls | wc`, nil},
	{`ls > out`, nil},
	{`ls 2>&1`, nil},
	{`ls &`, nil},
	{`! ls`, nil},
	{`X=1 ls`, nil},
	{`X=1`, nil},
	{`(ls)`, nil},
	{`{ ls; }`, nil},
	{`if true; then ls; fi`, nil},
	{`[[ -f x ]]`, nil},
	{`time ls`, nil},
	{"ls\nls", nil},
	// bash forks when anything follows the command's newline.
	{"ls\n\n", nil},
	{"ls\n# c", nil},
	{"ls\n ", nil},
	{"\nls", nil},
	{"ls 'a\nb'", nil},
	// Reserved words the parser takes for a command name.
	{"else", nil},
	{"else x", nil},
	{"in", nil},
	{"in x", nil},
	{`ls <<EOF` + "\nx\nEOF\n", nil},
	// bash's builtins run inside bash, not as their programs.
	{`cd /`, nil},
	{`echo hi`, nil},
	{`pwd`, nil},
	{`kill 1`, nil},
	{`exec ls`, nil},
	{`command ls`, nil},
	{`source x`, nil},
	{`. x`, nil},
	{`test -f x`, nil},
	{`[ -f x ]`, nil},
	{`true --help`, nil},
	{`%1`, nil},
	{`+x`, nil},
	{`-x`, nil},
	{` +x`, []string{"+x"}},
	{`%vim x`, nil},
	{"ls \r", nil},
	{`false x`, nil},
	{`export A=1`, nil},
	{`''`, nil},
	{``, nil},
	{`ls "unterminated`, nil},
}

func TestSimple(t *testing.T) {
	t.Parallel()
	for _, c := range simpleCases {
		got, ok := cmdline.Simple(c.src)
		if ok != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("Simple(%q) = %q, %v; want %q", c.src, got, ok, c.want)
		}
	}
}

// TestSimpleAsBash runs every line Simple accepts with bash, in a dir
// where the command's name is a program that prints its arguments: bash
// must have run that program with Simple's words, or exec'ing them would
// run something else than bash does.
func TestSimpleAsBash(t *testing.T) {
	t.Parallel()
	for _, c := range simpleCases {
		checkAsBash(t, c.src)
	}
}

// checkAsBash fails t when Simple accepts src and bash, running it, runs
// something else than Simple's words.
func checkAsBash(t *testing.T, src string) {
	t.Helper()
	words, ok := cmdline.Simple(src)
	if !ok {
		return
	}
	name := words[0]
	if name == "true" || name == "false" {
		return // bash runs its builtin; the program does the same
	}
	if filepath.IsAbs(name) || strings.Contains(name, "..") || strings.HasSuffix(name, "/") {
		return // a program that cannot be put in the test's dir
	}
	bash, err := exec.LookPath("bash")
	testenv.Need(t, "bash", err)
	dir := t.TempDir()
	prog := filepath.Join(dir, "bin", name)
	if strings.Contains(name, "/") {
		prog = filepath.Join(dir, name) // a path: bash runs it from the dir
	}
	if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nfor a; do printf '%s\\0' \"$a\"; done\n"), 0o755); err != nil {
		t.Skipf("no such file name here: %v", err)
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", src)
	cmd.Dir, cmd.Env = dir, []string{"PATH=" + filepath.Join(dir, "bin")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash -c %q: %v", src, err)
	}
	got := append([]string{name}, strings.Split(string(out), "\x00")...)
	got = got[:len(got)-1] // after the last NUL
	if !slices.Equal(got, words) {
		t.Errorf("Simple(%q) = %q; bash ran %q", src, words, got)
	}
}

// FuzzSimple: Simple never panics, and what it accepts bash reads as the
// same words.
func FuzzSimple(f *testing.F) {
	for _, c := range simpleCases {
		f.Add(c.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if strings.ContainsAny(src, "\x00") {
			return // bash cannot take it as an argument
		}
		checkAsBash(t, src)
	})
}
