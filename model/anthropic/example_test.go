package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/model/anthropic"
)

// A Model against a local server that speaks the Messages API; no key is
// needed. In rein, the key comes from ANTHROPIC_API_KEY only.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
		  "content":[{"type":"text","text":"Hello."}],"stop_reason":"end_turn","stop_sequence":null,
		  "usage":{"input_tokens":12,"output_tokens":3,"cache_read_input_tokens":0,"cache_creation_input_tokens":12}}`)
	}))
	defer srv.Close()

	m, err := anthropic.New(anthropic.Options{Model: "claude-sonnet-4-5", BaseURL: srv.URL})
	if err != nil {
		panic(err)
	}
	resp, err := m.Generate(context.Background(), &model.Request{
		System:   "Be brief.",
		Messages: []model.Message{{Role: model.RoleUser, Blocks: []model.Block{model.TextBlock("Hi")}}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Name(), resp.StopReason, resp.Text())
	fmt.Printf("usage %+v\n", resp.Usage)
	// Output:
	// anthropic:claude-sonnet-4-5 end_turn Hello.
	// usage {Input:12 Output:3 CacheRead:0 CacheWrite:12}
}
