// Package openai is a model.Model that talks to OpenAI's Chat Completions API
// through the official SDK (github.com/openai/openai-go/v3). Chat Completions
// is also what OpenAI-compatible local servers speak (llama.cpp, vLLM,
// Ollama, LM Studio), so the same model serves both: point BaseURL (or
// OPENAI_BASE_URL) at the server; a local server needs no key.
//
// The key comes from Options.APIKey, which the caller fills from
// OPENAI_API_KEY only; this package never prints it, never puts it into an
// error, and sends no Authorization header when there is none.
//
// Generate maps rein's provider-neutral request to one non-streaming
// completion and the answer back: text, function tool calls (tied to their
// results by id), usage with cached prompt tokens apart, and the finish reason
// as a model stop reason. The SDK retries 429 and 5xx answers with backoff.
//
// It does not stream, does not use the Responses API, does not offer custom
// (non-function) tools, and keeps no state between calls: the conversation is
// whatever the Request carries.
package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/internal/wire"
)

// Provider is the name this package puts on model names and opaque blocks.
const Provider = "openai"

// Environment variables read when the matching Options field is empty.
const (
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
)

// Defaults of Options.
const (
	DefaultTimeout    = 120 * time.Second
	DefaultMaxRetries = 2
	DefaultMaxTokens  = 4096
	// DefaultBaseURL is OpenAI's own API, used when neither Options.BaseURL
	// nor OPENAI_BASE_URL is set.
	DefaultBaseURL = "https://api.openai.com/v1/"
)

// Errors callers branch on. Every error of Generate other than a cancelled
// context wraps one of ErrAPI, ErrTimeout, ErrUnreachable or ErrResponse.
var (
	ErrNoModel     = errors.New("openai: no model name")
	ErrBaseURL     = errors.New("openai: bad base URL")
	ErrAPI         = errors.New("openai: the API refused the request") // an HTTP error status, after retries
	ErrTimeout     = errors.New("openai: the API did not answer in time")
	ErrUnreachable = errors.New("openai: the API could not be reached")
	ErrResponse    = errors.New("openai: the API's answer could not be used")
)

// Options configure a Model.
type Options struct {
	// Model is the model name the API knows, e.g. "gpt-4o-mini" or a local
	// server's model name. Required.
	Model string
	// BaseURL is the API root including its version, e.g.
	// "http://localhost:8080/v1". Empty means OPENAI_BASE_URL, else
	// DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token. Empty means OPENAI_API_KEY; when that
	// is empty too, no Authorization header is sent (local servers).
	APIKey string
	// Timeout bounds each attempt of a call; an attempt that runs out is not
	// retried. Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how often a 429, 408, 409, 5xx or a connection failure is
	// retried, with backoff (the server's Retry-After is honoured). Zero
	// means DefaultMaxRetries; negative means no retry.
	MaxRetries int
	// MaxTokens caps the output of each call. Zero means DefaultMaxTokens.
	MaxTokens int64
	// HTTPClient replaces the SDK's client (tests, proxies).
	HTTPClient *http.Client
}

// Model is an OpenAI Chat Completions model. It is safe for concurrent use.
type Model struct {
	name       string
	key        string // only to scrub it from error text
	baseURL    string
	newLimit   bool // send max_completion_tokens (OpenAI) rather than max_tokens (local servers)
	maxTokens  int64
	maxRetries int
	timeout    time.Duration
	client     oai.Client
}

var _ model.Model = (*Model)(nil)

// New returns a Model. It fails on a missing model name or a base URL that is
// not an absolute http(s) URL; it makes no request.
func New(o Options) (*Model, error) {
	if strings.TrimSpace(o.Model) == "" {
		return nil, fmt.Errorf("%w: name one, e.g. --model openai:gpt-4o-mini", ErrNoModel)
	}
	m := &Model{
		name:       o.Model,
		key:        o.APIKey,
		baseURL:    o.BaseURL,
		maxTokens:  o.MaxTokens,
		maxRetries: o.MaxRetries,
		timeout:    o.Timeout,
	}
	if m.key == "" {
		m.key = os.Getenv(EnvAPIKey)
	}
	if m.baseURL == "" {
		m.baseURL = os.Getenv(EnvBaseURL)
	}
	if m.baseURL == "" {
		m.baseURL = DefaultBaseURL
	}
	u, err := url.Parse(m.baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		// Say what is wrong without echoing a URL that may carry credentials.
		return nil, fmt.Errorf("%w: it must be an absolute http:// or https:// URL without user info, such as http://localhost:8080/v1", ErrBaseURL)
	}
	m.newLimit = u.Host == "api.openai.com"
	if m.maxTokens <= 0 {
		m.maxTokens = DefaultMaxTokens
	}
	switch {
	case m.maxRetries == 0:
		m.maxRetries = DefaultMaxRetries
	case m.maxRetries < 0:
		m.maxRetries = 0
	}
	if m.timeout <= 0 {
		m.timeout = DefaultTimeout
	}
	opts := []option.RequestOption{
		option.WithBaseURL(m.baseURL),
		option.WithAPIKey(m.key), // overrides what the SDK read from the environment
		option.WithMaxRetries(m.maxRetries),
		option.WithRequestTimeout(m.timeout),
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	if m.key == "" {
		opts = append(opts, option.WithHeaderDel("Authorization"))
	}
	m.client = oai.NewClient(opts...)
	return m, nil
}

// Name is "openai:MODEL".
func (m *Model) Name() string { return Provider + ":" + m.name }

// Generate makes one Chat Completions call. A cancelled ctx returns its cause.
func (m *Model) Generate(ctx context.Context, req *model.Request) (resp *model.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("%w: the SDK panicked: %v", ErrResponse, p)
		}
	}()
	if req == nil {
		return nil, fmt.Errorf("%w: no request", ErrResponse)
	}
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	var sniff wire.Sniffer // what the server sent, for the error
	peek := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(r)
		return sniff.Wrap(res), err
	})
	cc, err := m.client.Chat.Completions.New(ctx, params, peek)
	if err != nil {
		return nil, m.explain(ctx, err, &sniff)
	}
	if cc == nil {
		return nil, fmt.Errorf("%w: empty answer", ErrResponse)
	}
	resp, err = toResponse(cc)
	if err != nil {
		// JSON, but not a completion: say what came.
		return nil, fmt.Errorf("%w; the server at %s sent %s", err, m.baseURL, m.scrub(sniff.Describe()))
	}
	return resp, nil
}

// explain turns an SDK error into one that says what happened and what to
// do, without the key. sniff holds what the server sent, if anything: a
// server that answered with something other than the API's JSON (an HTML
// error page, cut or garbled JSON) is ErrResponse, or ErrAPI for an error
// status, never ErrUnreachable. The SDK does not retry a 2xx answer it
// cannot decode, and neither does rein.
func (m *Model) explain(ctx context.Context, err error, sniff *wire.Sniffer) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		msg := strings.TrimSpace(apiErr.Message)
		switch {
		case msg != "":
			msg = ": " + m.scrub(clip(msg, 300))
		case sniff.Answered():
			msg = " with no API error in its body (" + m.scrub(sniff.Describe()) + ")"
		}
		return fmt.Errorf("%w: the API at %s answered %d %s%s; %s (%w)", ErrAPI, m.baseURL,
			apiErr.StatusCode, http.StatusText(apiErr.StatusCode), msg, m.advice(apiErr.StatusCode), err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: no answer within %s (--llm-timeout): %w", ErrTimeout, m.timeout, err)
	}
	if sniff.Answered() {
		what, cause := m.scrub(sniff.Describe()), m.scrub(wire.Sanitize(err.Error()))
		if st := sniff.Status(); st >= 400 {
			// An error status whose body is not the API's error JSON (a
			// proxy's HTML page, say).
			return fmt.Errorf("%w: the server at %s answered %s; %s (%s)", ErrAPI, m.baseURL, what, m.advice(st), cause)
		}
		if sniff.Cut() {
			return fmt.Errorf("%w: the server at %s cut its answer short: %s; try again (%s)", ErrResponse, m.baseURL, what, cause)
		}
		return fmt.Errorf("%w: the server at %s answered with something that is not the Chat Completions API's JSON: %s; "+
			"check that --base-url (or %s) is an OpenAI-compatible API root, such as http://localhost:8080/v1 (%s)",
			ErrResponse, m.baseURL, what, EnvBaseURL, cause)
	}
	return fmt.Errorf("%w: %s, after %d retries: %s; check the server is running there, or set --base-url (or %s)",
		ErrUnreachable, m.baseURL, m.maxRetries, m.scrub(err.Error()), EnvBaseURL)
}

func (m *Model) advice(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "check " + EnvAPIKey
	case status == http.StatusForbidden:
		return "the key has no access to this model or endpoint; check " + EnvAPIKey + " and the project"
	case status == http.StatusNotFound:
		return fmt.Sprintf("check the model name %q and the base URL %s", m.name, m.baseURL)
	case status == http.StatusTooManyRequests:
		return fmt.Sprintf("rate limited or out of quota, still after %d retries; wait or raise the limits", m.maxRetries)
	case status >= 500:
		return fmt.Sprintf("the server failed, still after %d retries; try again later", m.maxRetries)
	case status == http.StatusBadRequest:
		return "the request was rejected; check the model supports tools and the options used"
	default:
		return "see the API's message"
	}
}

// scrub removes the key from s.
func (m *Model) scrub(s string) string {
	if len(m.key) >= 4 {
		s = strings.ReplaceAll(s, m.key, "[key]")
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
