package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// startFakeOpenAI starts, for one testscript, a server that speaks the Chat
// Completions wire format as OpenAI's API reference gives it, and exports
// its base URL as $OPENAI_FAKE_URL. It is stateless: to a conversation
// whose last message is the user's it answers with a calc tool call; once
// a tool result came back, with the text "The answer is " and that result.
// Every answer reports usage of 120 prompt and 12 completion tokens. A
// request that carries an Authorization header is refused (a local server
// needs no key, and rein must send none it was not given), and so is one
// whose conversation carries a tool-call id twice, as OpenAI's API does.
func startFakeOpenAI(e *testscript.Env) {
	srv := httptest.NewServer(http.HandlerFunc(fakeChatCompletions))
	e.Defer(srv.Close)
	e.Setenv("OPENAI_FAKE_URL", srv.URL+"/v1/")
}

func fakeChatCompletions(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "" {
		http.Error(w, `{"error":{"message":"a key was sent to a server that needs none","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role      string `json:"role"`
			Content   any    `json:"content"`
			ToolCalls []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request body","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	seen := map[string]bool{}
	for i, m := range req.Messages {
		for _, c := range m.ToolCalls {
			if seen[c.ID] {
				http.Error(w, fmt.Sprintf(`{"error":{"message":"Invalid parameter: Duplicate value for 'tool_call_id' of %s in message[%d].","type":"invalid_request_error","param":"messages","code":"invalid_value"}}`, c.ID, i), http.StatusBadRequest)
				return
			}
			seen[c.ID] = true
		}
	}
	last := req.Messages[len(req.Messages)-1]
	msg := `{"role":"assistant","content":"I'll compute it.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"calc","arguments":"{\"expression\":\"2+3\"}"}}]}`
	finish := "tool_calls"
	if last.Role == "tool" {
		content, _ := last.Content.(string)
		// The result is wrapped as <tool_result …>5</tool_result>: keep the number.
		result := strings.TrimSpace(content[strings.Index(content, ">")+1 : strings.LastIndex(content, "<")])
		text, _ := json.Marshal("The answer is " + result + ".")
		msg, finish = `{"role":"assistant","content":`+string(text)+`}`, "stop"
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"chatcmpl-%d","object":"chat.completion","created":1767225600,"model":%q,`+
		`"choices":[{"index":0,"message":%s,"logprobs":null,"finish_reason":%q}],`+
		`"usage":{"prompt_tokens":120,"completion_tokens":12,"total_tokens":132}}`, len(req.Messages), req.Model, msg, finish)
}
