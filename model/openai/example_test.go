package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/openai"
)

// A local OpenAI-compatible server needs no key: point BaseURL at it.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"llama3.1:8b",
		  "choices":[{"index":0,"message":{"role":"assistant","content":"Hello."},"finish_reason":"stop"}],
		  "usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`)
	}))
	defer srv.Close()

	m, err := openai.New(openai.Options{Model: "llama3.1:8b", BaseURL: srv.URL + "/v1"})
	if err != nil {
		panic(err)
	}
	resp, err := m.Generate(context.Background(), &model.Request{
		Messages: []model.Message{{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("Say hello.")}}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Name(), resp.StopReason, resp.Text(), resp.Usage.Input, resp.Usage.Output)
	// Output: openai:llama3.1:8b end_turn Hello. 12 3
}
