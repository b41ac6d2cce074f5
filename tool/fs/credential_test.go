package fs_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/secret"
	"github.com/reinhq/rein/tool"
	fstool "github.com/reinhq/rein/tool/fs"
)

const exported = "zq7F3a9c1e-planted-4b2dXy"

func credentialWorkspace(t *testing.T) (fstool.Options, func(string) tool.Tool) {
	t.Helper()
	root, dir := workspace(t, map[string]string{
		".env":              "DB_PASSWORD=hunter2-not-exported\nSERVICE_API_KEY=" + exported + "\n",
		".env.example":      "DB_PASSWORD=changeme\n",
		"config/app.yaml":   "service:\n  key: " + exported + "\n",
		"config/backup.txt": "blob: " + base64.StdEncoding.EncodeToString([]byte("key="+exported)) + "\n",
		"deploy/server.pem": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
		"README.md":         "Set DB_PASSWORD in .env; see config/app.yaml.\n",
		"main.go":           "package main // reads DB_PASSWORD\n",
	})
	symlink(t, ".env", filepath.Join(dir, "notes.txt"))
	o := fstool.Options{Redact: secret.NewRedactor([]string{"SERVICE_API_KEY=" + exported}).Redact}
	return o, func(name string) tool.Tool { return byName(root, o, name) }
}

// read_file and grep ask before they show a credential file: by its name,
// by the name a link leads to, or because it holds an exported secret
// (as written or re-spelled). Ordinary files, templates and directories
// are read and searched without a question.
func TestCredentialFilesNeedAYes(t *testing.T) {
	t.Parallel()
	_, tools := credentialWorkspace(t)
	tests := []struct {
		tool, args string
		want       string // in the reason; "" for no question
	}{
		{"read_file", `{"path":".env"}`, "would read .env, a credential file"},
		{"read_file", `{"path":"./config/../.env"}`, "a credential file"},
		{"read_file", `{"path":"notes.txt"}`, "would read notes.txt, a link to .env, a credential file"},
		{"read_file", `{"path":"deploy/server.pem"}`, "a credential file"},
		{"read_file", `{"path":"config/app.yaml"}`, "holds a secret (SERVICE_API_KEY)"},
		{"read_file", `{"path":"config/backup.txt"}`, "holds a secret (SERVICE_API_KEY)"},
		{"grep", `{"pattern":"PASSWORD","path":".env"}`, "would search .env, a credential file"},
		{"grep", `{"pattern":"key","path":"config/app.yaml"}`, "holds a secret"},
		// Legitimate.
		{"read_file", `{"path":"README.md"}`, ""},
		{"read_file", `{"path":".env.example"}`, ""},
		{"read_file", `{"path":"main.go"}`, ""},
		{"read_file", `{"path":"missing.txt"}`, ""},
		{"grep", `{"pattern":"PASSWORD"}`, ""},
		{"grep", `{"pattern":"PASSWORD","path":"config"}`, ""},
	}
	for _, tt := range tests {
		cf, ok := tools(tt.tool).(tool.Confirmer)
		if !ok {
			t.Fatalf("%s is no tool.Confirmer", tt.tool)
		}
		got := cf.Confirm(t.Context(), json.RawMessage(tt.args))
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s %s: asks %q, want %q", tt.tool, tt.args, got, tt.want)
		}
		if strings.Contains(got, exported) || strings.Contains(got, "hunter2") {
			t.Errorf("the reason shows the secret: %q", got)
		}
	}
}

// Through the pipeline: the confirm gate asks; no means the file is not
// read, yes means it is; with nobody to ask (bypass), it is refused.
func TestCredentialFileThroughPipeline(t *testing.T) {
	t.Parallel()
	_, tools := credentialWorkspace(t)
	rf := tools("read_file")
	for _, yes := range []bool{false, true} {
		rec := &approve.Recorder{Next: approve.Fixed(yes)}
		p := gate.NewPipeline(rec, gate.Confirm{})
		v := p.Decide(t.Context(), &gate.Call{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":".env"}`), Tool: rf})
		if reqs := rec.Requests(); len(reqs) != 1 || reqs[0].Gate != gate.NameConfirm {
			t.Errorf("yes=%v: asked %+v, want one question from confirm", yes, reqs)
		}
		if (v.Decision == gate.Allow) != yes {
			t.Errorf("yes=%v: decision %s", yes, v.Decision)
		}
	}
	v := gate.NewPipeline(approve.Fixed(true), gate.Confirm{}).WithoutAsking().Decide(t.Context(),
		&gate.Call{ID: "c2", Name: "read_file", Args: json.RawMessage(`{"path":".env"}`), Tool: rf})
	if v.Decision != gate.Deny {
		t.Errorf("bypass: %s, want deny", v.Decision)
	}
}

// A directory search never prints a line of a credential file: those
// files are skipped and named in a note; the rest is searched as before.
func TestGrepSkipsCredentialFiles(t *testing.T) {
	t.Parallel()
	_, tools := credentialWorkspace(t)
	out, err := call(t, tools("grep"), map[string]any{"pattern": "PASSWORD|key|blob"})
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"hunter2", exported, ".env:1:", "config/app.yaml:2", "config/backup.txt:1"} {
		if strings.Contains(out, leak) {
			t.Errorf("grep showed %q:\n%s", leak, out)
		}
	}
	for _, want := range []string{"README.md:1: Set DB_PASSWORD", "main.go:1:", ".env.example:1: DB_PASSWORD=changeme",
		"[4 credential files not searched: .env, config/app.yaml, config/backup.txt, deploy/server.pem."} {
		if !strings.Contains(out, want) {
			t.Errorf("grep output lacks %q:\n%s", want, out)
		}
	}
	// Named and approved, the file is searched.
	out, err = call(t, tools("grep"), map[string]any{"pattern": "PASSWORD", "path": ".env"})
	if err != nil || !strings.Contains(out, ".env:1: DB_PASSWORD") {
		t.Errorf("named credential file: %q, %v", out, err)
	}
}

// A file checked and let through without a question that becomes a
// credential file before the call runs (a link swapped in, a secret
// written into it) is not shown.
func TestCredentialSwapAfterCheck(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		tool string
		args string
		swap func(t *testing.T, dir string)
	}{
		{"read_file, link swapped in", "read_file", `{"path":"plain.txt"}`, func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, "plain.txt")))
			symlink(t, ".env", filepath.Join(dir, "plain.txt"))
		}},
		{"read_file, secret written in", "read_file", `{"path":"plain.txt"}`, func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "plain.txt"), []byte("key="+exported+"\n"), 0o644))
		}},
		{"grep, link swapped in", "grep", `{"pattern":".","path":"plain.txt"}`, func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, "plain.txt")))
			symlink(t, ".env", filepath.Join(dir, "plain.txt"))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, dir := workspace(t, map[string]string{".env": "TOKEN=" + exported + "\n", "plain.txt": "hello\n"})
			o := fstool.Options{Redact: secret.NewRedactor([]string{"SERVICE_API_KEY=" + exported}).Redact}
			tl := byName(root, o, tt.tool)
			if why := tl.(tool.Confirmer).Confirm(t.Context(), json.RawMessage(tt.args)); why != "" {
				t.Fatalf("asked %q before the swap", why)
			}
			tt.swap(t, dir)
			out, err := tl.Run(t.Context(), json.RawMessage(tt.args))
			if !errors.Is(err, fstool.ErrChanged) || strings.Contains(out, exported) {
				t.Fatalf("got %q, %v; want ErrChanged", out, err)
			}
			// Asked again, the question comes.
			if why := tl.(tool.Confirmer).Confirm(t.Context(), json.RawMessage(tt.args)); why == "" {
				t.Error("no question after the swap")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
