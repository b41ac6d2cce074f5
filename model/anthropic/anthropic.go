// Package anthropic is rein's model.Model for Anthropic's Messages API,
// called through the official Go SDK (github.com/anthropics/anthropic-sdk-go/v2).
//
// It maps a model.Request to POST /v1/messages and the answer back to a
// model.Response: text, tool calls tied to their results by id, usage with
// prompt-cache tokens, and the provider's stop reason. Prompt caching is on:
// the system prompt, the tool list and the conversation so far each end with a
// cache breakpoint. Thinking blocks and any block type rein does not know come
// back as opaque blocks and are sent back byte for byte on the next call, so
// their signatures stay valid. The SDK retries 429 and 5xx answers with
// backoff; a failure after the retries is an error that says what happened.
//
// The package reads the API key and base URL only from Options or from
// ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL; it never reads the SDK's other
// credential sources (profiles, auth tokens, federation), never logs, and never
// puts the key in an error. It does not stream, does not enable extended
// thinking, and does not decide what a stop reason means for a run: that is
// the loop's job.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/internal/wire"
)

// The environment variables the package reads when Options leaves a field empty.
const (
	EnvAPIKey  = "ANTHROPIC_API_KEY"
	EnvBaseURL = "ANTHROPIC_BASE_URL"
)

// Defaults for the zero fields of Options.
const (
	DefaultTimeout    = 120 * time.Second
	DefaultMaxRetries = 2
	DefaultMaxTokens  = 4096
	// DefaultBaseURL is the SDK's own default, used when neither
	// Options.BaseURL nor ANTHROPIC_BASE_URL is set.
	DefaultBaseURL = "https://api.anthropic.com/"
)

// Errors callers branch on. API answers with an error status are *APIError;
// a server that answered with something that is not the API's JSON (an HTML
// page, cut or garbled JSON) is ErrBadResponse, one that could not be
// reached at all ErrUnreachable.
var (
	ErrNoModel     = errors.New("anthropic: no model name")
	ErrBaseURL     = errors.New("anthropic: bad base URL")
	ErrTimeout     = errors.New("anthropic: the API did not answer in time")
	ErrBadRequest  = errors.New("anthropic: the request cannot be sent")
	ErrBadResponse = errors.New("anthropic: the API's answer cannot be used")
	ErrUnreachable = errors.New("anthropic: the API could not be reached")
)

// Options configure a Model. Only Model is required.
type Options struct {
	// Model is the API's model name, e.g. "claude-sonnet-4-5".
	Model string
	// BaseURL is the API's root URL. Empty means ANTHROPIC_BASE_URL, else
	// the SDK's default (https://api.anthropic.com/).
	BaseURL string
	// APIKey authenticates the calls. Empty means ANTHROPIC_API_KEY; when
	// that is empty too, no credential is sent (a local server needs none).
	// Callers must take it from the environment, never from a flag.
	APIKey string
	// Timeout caps each attempt of a call. Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times the SDK retries a 408, 409, 429 or 5xx
	// answer or a connection error, with backoff (Retry-After honoured).
	// Zero means DefaultMaxRetries; negative means no retry.
	MaxRetries int
	// MaxTokens caps the output of each call. Zero means DefaultMaxTokens.
	MaxTokens int64
	// HTTPClient replaces the SDK's HTTP client (tests).
	HTTPClient *http.Client
}

// Model is a model.Model backed by the Anthropic Messages API. It keeps no
// conversation state, so one Model may serve several runs at once.
type Model struct {
	client    anthropic.Client
	name      string
	key       string // only to scrub it from error text
	base      string // the base URL in use, for error text
	maxTokens int64
	retries   int
	timeout   time.Duration
}

var _ model.Model = (*Model)(nil)

// New checks o and returns a Model. It makes no network call.
func New(o Options) (*Model, error) {
	name := strings.TrimSpace(o.Model)
	if name == "" {
		return nil, ErrNoModel
	}
	base := o.BaseURL
	if base == "" {
		base = os.Getenv(EnvBaseURL)
	}
	if base != "" {
		if err := checkBaseURL(base); err != nil {
			return nil, err
		}
	}
	key := o.APIKey
	if key == "" {
		key = os.Getenv(EnvAPIKey)
	}
	m := &Model{name: name, key: key, base: base, maxTokens: o.MaxTokens, retries: o.MaxRetries, timeout: o.Timeout}
	if m.base == "" {
		m.base = DefaultBaseURL
	}
	if m.maxTokens <= 0 {
		m.maxTokens = DefaultMaxTokens
	}
	switch {
	case m.retries == 0:
		m.retries = DefaultMaxRetries
	case m.retries < 0:
		m.retries = 0
	}
	if m.timeout <= 0 {
		m.timeout = DefaultTimeout
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(), // no profiles, tokens or headers from the environment
		option.WithoutOpenTelemetry(),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(m.retries),
		option.WithRequestTimeout(m.timeout),
	}
	if base != "" {
		opts = append(opts, option.WithBaseURL(base))
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	m.client = anthropic.NewClient(opts...)
	return m, nil
}

// checkBaseURL accepts an absolute http or https URL with a host.
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%w: it does not parse: use a URL like https://api.anthropic.com/", ErrBaseURL)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: %q is not an http or https URL with a host", ErrBaseURL, u.Redacted())
	}
	if u.User != nil {
		return fmt.Errorf("%w: put the key in %s, not in the URL", ErrBaseURL, EnvAPIKey)
	}
	return nil
}

// Name is "anthropic:MODEL".
func (m *Model) Name() string { return "anthropic:" + m.name }

// Generate sends req to the Messages API and maps the answer. A cancelled ctx
// returns its cause; an API error after the retries returns *APIError.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: no request", ErrBadRequest)
	}
	params, body, err := m.buildRequest(req)
	if err != nil {
		return nil, err
	}
	tries := 0
	var sniff wire.Sniffer // what the server sent, for the error
	count := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		tries++ // the SDK's attempts are sequential
		res, err := next(r)
		return sniff.Wrap(res), err
	})
	// The SDK gets only what it reads itself (model and max_tokens, for its
	// timeout rules); the body it sends is ours, built from params.
	head := anthropic.MessageNewParams{Model: params.Model, MaxTokens: params.MaxTokens}
	msg, err := m.client.Messages.New(ctx, head, count,
		option.WithRequestBody("application/json", body))
	if err != nil {
		return nil, m.callError(ctx, err, tries, &sniff)
	}
	return mapResponse(msg)
}
