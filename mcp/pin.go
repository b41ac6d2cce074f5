package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// PinState says how a tool's definition compares with the one pinned.
type PinState uint8

// The pin states.
const (
	// PinNew: no definition was pinned for the tool; the first one seen
	// (without injection markers) is pinned and the tool offered.
	PinNew PinState = iota + 1
	// PinMatch: the definition is the one pinned.
	PinMatch
	// PinChanged: the definition differs from the one pinned (a rug
	// pull, or an update): the tool is unavailable until the user
	// approves the new one (rein mcp pin SERVER).
	PinChanged
)

func (s PinState) String() string {
	switch s {
	case PinNew:
		return "new"
	case PinMatch:
		return "pinned"
	case PinChanged:
		return "changed"
	}
	return fmt.Sprintf("pin(%d)", uint8(s))
}

// MarshalText renders the state by name.
func (s PinState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// DefaultPinFile is where pins are kept: $XDG_STATE_HOME/rein/mcp/pins.json,
// or ~/.local/state/rein/mcp/pins.json when XDG_STATE_HOME is unset.
func DefaultPinFile() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "rein", "mcp", "pins.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("mcp pins: no home directory to keep them in (%w); set XDG_STATE_HOME", err)
	}
	return filepath.Join(home, ".local", "state", "rein", "mcp", "pins.json"), nil
}

// pin is one tool's pinned definition: its SHA-256 and the canonical
// definition itself, so that a change can be shown as a diff.
type pin struct {
	SHA256     string          `json:"sha256"`
	Definition json.RawMessage `json:"definition"`
	Pinned     time.Time       `json:"pinned"`
}

// pinFile is the file's content: pins by server, then by MCP tool name.
type pinFile struct {
	Servers map[string]map[string]pin `json:"servers"`
}

// digest is the hex SHA-256 of a canonical definition.
func digest(def []byte) string {
	sum := sha256.Sum256(def)
	return hex.EncodeToString(sum[:])
}

// loadPins reads the pin file; a file that does not exist holds no pins.
func loadPins(path string) (pinFile, error) {
	pf := pinFile{Servers: map[string]map[string]pin{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return pf, nil
	}
	if err != nil {
		return pf, fmt.Errorf("mcp pins: %w", err)
	}
	if err := json.Unmarshal(data, &pf); err != nil {
		return pf, fmt.Errorf("mcp pins %s: not a pin file (%v): move it away to start over, every tool will be pinned anew", path, err)
	}
	if pf.Servers == nil {
		pf.Servers = map[string]map[string]pin{}
	}
	return pf, nil
}

// lookup compares def with the pin of server's tool name.
func (pf pinFile) lookup(server, name string, def []byte) (PinState, json.RawMessage) {
	p, ok := pf.Servers[server][name]
	switch {
	case !ok:
		return PinNew, nil
	case p.SHA256 == digest(def):
		return PinMatch, p.Definition
	}
	return PinChanged, p.Definition
}

// savePins adds pins to the file at path: it reads the file again first
// (another rein may have pinned meanwhile), then replaces it atomically.
func savePins(path string, add map[string]map[string][]byte) error {
	if len(add) == 0 {
		return nil
	}
	pf, err := loadPins(path)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	for server, tools := range add {
		if pf.Servers[server] == nil {
			pf.Servers[server] = map[string]pin{}
		}
		for name, def := range tools {
			pf.Servers[server][name] = pin{SHA256: digest(def), Definition: def, Pinned: now}
		}
	}
	data, err := json.MarshalIndent(pf, "", "  ")
	if err != nil {
		return fmt.Errorf("mcp pins: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("mcp pins: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pins-*.json")
	if err != nil {
		return fmt.Errorf("mcp pins: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("mcp pins: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("mcp pins: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("mcp pins: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("mcp pins: %w", err)
	}
	return nil
}
