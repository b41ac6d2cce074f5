package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/reinhq/rein/model/internal/wire"
)

// Beta sends one Messages API call that model.Request cannot say, under the
// beta named by the anthropic-beta header (computer use, in package
// computer/anthropic, is one). fields are the request's JSON fields except
// "model" and "max_tokens", which Beta sets from the Model and which fields
// may not hold. The call goes through the Model's client: the same key,
// base URL, timeout, retries and errors as Generate. The answer is the
// SDK's message, for the caller to map.
func (m *Model) Beta(ctx context.Context, beta string, fields map[string]any) (*anthropic.Message, error) {
	body := make(map[string]any, len(fields)+2)
	for k, v := range fields {
		if k == "model" || k == "max_tokens" {
			return nil, fmt.Errorf("%w: the field %q is the Model's to set", ErrBadRequest, k)
		}
		body[k] = v
	}
	body["model"], body["max_tokens"] = m.name, m.maxTokens
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	tries := 0
	var sniff wire.Sniffer // what the server sent, for the error
	count := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		tries++ // the SDK's attempts are sequential
		res, err := next(r)
		return sniff.Wrap(res), err
	})
	head := anthropic.MessageNewParams{Model: anthropic.Model(m.name), MaxTokens: m.maxTokens}
	msg, err := m.client.Messages.New(ctx, head, count,
		option.WithHeader("anthropic-beta", beta),
		option.WithRequestBody("application/json", raw))
	if err != nil {
		return nil, m.callError(ctx, err, tries, &sniff)
	}
	return msg, nil
}
