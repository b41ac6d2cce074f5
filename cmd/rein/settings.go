package main

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/model/anthropic"
	"github.com/reinhq/rein/model/openai"
	"github.com/reinhq/rein/price"
)

// settings is the effective configuration of a run, recorded at session start.
type settings struct {
	Model string `json:"model"`
	// BaseURL is the provider's API base the session talked to, when not
	// the provider's own (--base-url, else its environment variable),
	// without user info: a resumed conversation goes on with the same
	// server, never silently with another one.
	BaseURL string        `json:"base_url,omitempty"`
	Workdir string        `json:"workdir"`
	Config  config.Config `json:"config"`
	Files   []string      `json:"config_files,omitempty"`
	Expect  string        `json:"expect,omitempty"`
	// SecretEnv names the secret-looking environment variables (names
	// only): their values are redacted from everything the model and the
	// log see, and commands never get them.
	SecretEnv []string `json:"secret_env,omitempty"`
	// PromptCheck is the verdict of the system-prompt check (secret.CheckPrompt).
	PromptCheck string `json:"prompt_check,omitempty"`
	// Price is what the model is charged at, per million tokens; absent
	// when the price table has none for it.
	Price *price.Price `json:"price_per_mtok,omitempty"`
	// Conversation marks an interactive session (rein with no command).
	Conversation bool `json:"conversation,omitempty"`
	// MCPUnsandboxed lists the MCP stdio servers that run outside the
	// sandbox, with the user's rights, as announced on stderr at start.
	MCPUnsandboxed []string `json:"mcp_unsandboxed,omitempty"`
}

// recordedModel is the model's name as the session's settings record it,
// for a resume to build it again from anywhere: a script's path made
// absolute.
func recordedModel(name string) string {
	if path, ok := strings.CutPrefix(name, "scripted:"); ok && path != "" && !filepath.IsAbs(path) {
		if abs, err := filepath.Abs(path); err == nil {
			return "scripted:" + abs
		}
	}
	return name
}

// recordedBaseURL is the API base a model's session talks to, as its
// settings record it: the flag, else the provider's environment variable,
// without user info; "" for the provider's own.
func recordedBaseURL(model, flag string, getenv func(string) string) string {
	base := flag
	if base == "" {
		switch provider, _, _ := strings.Cut(model, ":"); provider {
		case "anthropic":
			base = getenv(anthropic.EnvBaseURL)
		case "openai":
			base = getenv(openai.EnvBaseURL)
		}
	}
	if u, err := url.Parse(base); err == nil && u.User != nil {
		u.User = nil
		base = u.String()
	}
	return base
}
