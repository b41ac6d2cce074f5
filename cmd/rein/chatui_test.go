package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/reinhq/rein/internal/ptytest"
)

// The line editor, spinner and colour are for a terminal only: a pipe or a
// buffer on either side gets the plain chat, and --json (stdout the event
// stream) keeps the editor on stderr but never a spinner.
func TestChatUIOnlyOnATerminal(t *testing.T) {
	p := ptytest.Open(t, 80, 24)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var buf bytes.Buffer
	tests := []struct {
		name        string
		e           env
		json        bool
		wantUI      bool
		wantSpinner bool
	}{
		{name: "terminal", e: env{stdin: p.Slave, stdout: p.Slave, stderr: p.Slave}, wantUI: true, wantSpinner: true},
		{name: "terminal, --json", e: env{stdin: p.Slave, stdout: &buf, stderr: p.Slave}, json: true, wantUI: true},
		{name: "--json with stderr not a terminal", e: env{stdin: p.Slave, stdout: p.Slave, stderr: w}, json: true},
		{name: "stdin a pipe", e: env{stdin: r, stdout: p.Slave, stderr: p.Slave}},
		{name: "stdout a pipe", e: env{stdin: p.Slave, stdout: w, stderr: p.Slave}},
		{name: "stdout a buffer", e: env{stdin: p.Slave, stdout: &buf, stderr: p.Slave}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ui := newChatUI(tt.e, tt.json)
			if (ui != nil) != tt.wantUI {
				t.Fatalf("terminal interface: %v, want %v", ui != nil, tt.wantUI)
			}
			if ui != nil && (ui.act != nil) != tt.wantSpinner {
				t.Fatalf("spinner: %v, want %v", ui.act != nil, tt.wantSpinner)
			}
		})
	}
}
