package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/reinhq/rein/config"
	"github.com/reinhq/rein/internal/termsafe"
	"github.com/reinhq/rein/model/anthropic"
	"github.com/reinhq/rein/model/openai"
	"github.com/reinhq/rein/secret"
)

// envModel names the model when --model does not.
const envModel = "REIN_MODEL"

// dialTimeout bounds the start-up check that a base URL answers.
const dialTimeout = 5 * time.Second

// chooseModel is the model to use: --model, else $REIN_MODEL, else
// model.default from the config files (the project's over the user's).
func chooseModel(flag string, cfg config.Config, getenv func(string) string) string {
	switch {
	case flag != "":
		return flag
	case getenv(envModel) != "":
		return getenv(envModel)
	}
	return cfg.Model.Default
}

// preflight finds, before the first model call and without retries, what
// would make every call fail: no API key for a provider's own API, or a
// base URL nothing listens at. Each error says the fix.
func preflight(ctx context.Context, name, baseFlag string, getenv func(string) string) error {
	provider, _, _ := strings.Cut(name, ":")
	var keyEnv, baseEnv string
	switch provider {
	case "anthropic":
		keyEnv, baseEnv = anthropic.EnvAPIKey, anthropic.EnvBaseURL
	case "openai":
		keyEnv, baseEnv = openai.EnvAPIKey, openai.EnvBaseURL
	default:
		return nil
	}
	base, from := baseFlag, "--base-url"
	if base == "" {
		base, from = getenv(baseEnv), baseEnv
	}
	if base == "" { // the provider's own API needs a key
		if getenv(keyEnv) == "" {
			return usagef("--model %s: set %s or pass --model scripted:PATH", name, keyEnv)
		}
		return nil
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil // the provider's constructor says what is wrong with it
	}
	host := u.Host
	if u.Port() == "" {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return usagef("cannot reach %s: %s; check %s", base, dialProblem(err), from)
	}
	return conn.Close()
}

// dialProblem is a failed dial in a few words.
func dialProblem(err error) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return "no such host"
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		return "no answer in " + dialTimeout.String()
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// checkCredentialWorkdir refuses a work dir that contains one of the
// machine's credential stores (secret's list, under home): the home
// directory or a parent of ~/.ssh. Every shell call would be refused
// there, and the file tools would see the keys' neighbours.
func checkCredentialWorkdir(workdir, home string) error {
	if home == "" {
		return nil
	}
	for _, p := range secret.CredentialDirs(home) {
		rel, err := filepath.Rel(workdir, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			continue
		}
		return usagef("--workdir %s: it contains the credential store %s; pass the project directory with --workdir DIR", workdir, p)
	}
	return nil
}

// startupChecks warns, on w, of the secret-looking environment variables
// (names only) and the credential directories that exist, and refuses a
// system prompt that would leak the environment. It returns the names.
func startupChecks(w io.Writer, environ []string, system string) ([]string, error) {
	names := secret.Names(environ)
	if err := secret.CheckPrompt(system, names); err != nil {
		return nil, fmt.Errorf("refusing to start: %w", err)
	}
	if len(names) > 0 {
		fmt.Fprintf(w, "rein: secret-looking environment variables (names only): %s; their values are redacted from what the model and the audit log see, and commands never get them\n",
			termsafe.Line(strings.Join(names, ", ")))
	}
	if dirs := secret.CredentialDirs(home()); len(dirs) > 0 {
		fmt.Fprintf(w, "rein: credentials on this machine: %s; the file tools see only the work dir and sandboxed commands cannot read them, but --sandbox none can\n",
			termsafe.Line(strings.Join(dirs, ", ")))
	}
	return names, nil
}

// checkWorkdir returns the work directory flag as an absolute path, or a
// one-line usage error when it is missing or not a directory: checked
// before anything is read from it (its .rein/config.toml).
func checkWorkdir(flag string) (string, error) {
	dir, err := filepath.Abs(flag)
	if err != nil {
		return "", usagef("--workdir %s: %v", flag, err)
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", usagef("--workdir %s: no such directory; pass the project directory", flag)
	case err != nil:
		return "", usagef("--workdir %s: %v; pass the project directory", flag, errors.Unwrap(err))
	case !st.IsDir():
		return "", usagef("--workdir %s: not a directory; pass the project directory", flag)
	}
	return dir, nil
}

func home() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}
