package mail_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/mail"
)

func TestSpec(t *testing.T) {
	t.Parallel()
	spec := mail.SendEmail(&mail.Outbox{}).Spec()
	if spec.Name != "send_email" {
		t.Errorf("Name = %q, want send_email", spec.Name)
	}
	if spec.Effect != tool.Irreversible {
		t.Errorf("Effect = %v, want %v", spec.Effect, tool.Irreversible)
	}
	if !json.Valid(spec.Schema) {
		t.Errorf("Schema is not valid JSON: %s", spec.Schema)
	}
}

func TestSend(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args string
		want mail.Message
	}{
		{"all fields", `{"to":"ann@example.com","subject":"Order","body":"Total: 1399"}`,
			mail.Message{To: "ann@example.com", Subject: "Order", Body: "Total: 1399"}},
		{"no subject", `{"to":"ann@example.com","body":"hi"}`,
			mail.Message{To: "ann@example.com", Body: "hi"}},
		{"plus and subdomain", `{"to":"a.b+tag@mail.example.co.uk","body":"x"}`,
			mail.Message{To: "a.b+tag@mail.example.co.uk", Body: "x"}},
		{"multi-line unicode body", `{"to":"a@b.com","subject":"Ré","body":"line 1\nlíne 2 漢"}`,
			mail.Message{To: "a@b.com", Subject: "Ré", Body: "line 1\nlíne 2 漢"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var o mail.Outbox
			send := mail.SendEmail(&o)
			out, err := send.Run(t.Context(), json.RawMessage(tt.args))
			if err != nil {
				t.Fatalf("send_email %s: %v", tt.args, err)
			}
			if want := "Sent to " + tt.want.To + "."; out != want {
				t.Errorf("send_email %s = %q, want %q", tt.args, out, want)
			}
			if got := o.Messages(); len(got) != 1 || got[0] != tt.want {
				t.Errorf("outbox = %+v, want exactly [%+v]", got, tt.want)
			}
			if o.Len() != 1 {
				t.Errorf("Len() = %d, want 1", o.Len())
			}
		})
	}
}

func TestSendRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args string
		want string // substring of the message
	}{
		{"empty to", `{"to":"","body":"x"}`, `"to" is empty`},
		{"missing to", `{"body":"x"}`, `"to" is required`},
		{"not an address", `{"to":"not an address","body":"x"}`, `"to" must be one plain email address`},
		{"two addresses", `{"to":"a@b.com, c@d.com","body":"x"}`, `not "a@b.com, c@d.com"`},
		{"two addresses no space", `{"to":"a@b.com,c@d.com","body":"x"}`, "one plain email address"},
		{"display name", `{"to":"Name <a@b.com>","body":"x"}`, `not "Name <a@b.com>"`},
		{"angle brackets", `{"to":"<a@b.com>","body":"x"}`, "one plain email address"},
		{"surrounding space", `{"to":" a@b.com ","body":"x"}`, "one plain email address"},
		{"comment", `{"to":"a@b.com (Ann)","body":"x"}`, "one plain email address"},
		{"no domain", `{"to":"ann@","body":"x"}`, "one plain email address"},
		{"no local part", `{"to":"@example.com","body":"x"}`, "one plain email address"},
		{"header injection", `{"to":"a@b.com\r\nBcc: c@d.com","body":"x"}`, "one plain email address"},
		{"duplicate to", `{"to":"boss@example.com","body":"x","to":"evil@example.net"}`, `key "to" appears twice`},
		{"to in two cases", `{"to":"boss@example.com","body":"x","TO":"evil@example.net"}`, `unknown field "TO"`},
		{"empty body", `{"to":"a@b.com","body":""}`, `"body" is empty`},
		{"missing body", `{"to":"a@b.com","subject":"s"}`, `"body" is required`},
		{"unknown field", `{"to":"a@b.com","body":"x","cc":"c@d.com"}`, `unknown field "cc"`},
		{"to as array", `{"to":["a@b.com"],"body":"x"}`, `"to" must be a string`},
		{"array args", `[]`, "expected a JSON object, got array"},
		{"malformed args", `{"to":"a@b.com",`, "expected a JSON object, got invalid JSON"},
		{"empty args", ``, `"to", "body" are required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var o mail.Outbox
			send := mail.SendEmail(&o)
			out, err := send.Run(t.Context(), json.RawMessage(tt.args))
			if !errors.Is(err, tool.ErrArgs) {
				t.Fatalf("send_email %s = %q, %v; want an error matching tool.ErrArgs", tt.args, out, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("send_email %s: error %q, want it to contain %q", tt.args, err, tt.want)
			}
			if n := o.Len(); n != 0 {
				t.Errorf("send_email %s: outbox has %d messages, want none: %+v", tt.args, n, o.Messages())
			}
			// The validation gate sees the same verdict without running.
			if v, ok := send.(tool.Validator); !ok || !errors.Is(v.Validate(json.RawMessage(tt.args)), tool.ErrArgs) {
				t.Errorf("Validate(%s) does not reject what Run rejects", tt.args)
			}
		})
	}
}

func TestMessagesIsACopy(t *testing.T) {
	t.Parallel()
	var o mail.Outbox
	if got := o.Messages(); len(got) != 0 {
		t.Fatalf("zero Outbox has messages: %+v", got)
	}
	send := mail.SendEmail(&o)
	if _, err := send.Run(t.Context(), json.RawMessage(`{"to":"a@b.com","body":"x"}`)); err != nil {
		t.Fatal(err)
	}
	got := o.Messages()
	got[0].Body = "changed"
	_ = append(got, mail.Message{To: "c@d.com"})
	if m := o.Messages(); len(m) != 1 || m[0].Body != "x" {
		t.Errorf("changing the returned slice changed the outbox: %+v", m)
	}
}

func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	const n = 64
	var o mail.Outbox
	send := mail.SendEmail(&o)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			args := fmt.Sprintf(`{"to":"user%d@example.com","body":"msg %d"}`, i, i)
			_, errs[i] = send.Run(t.Context(), json.RawMessage(args))
			_ = o.Len()
			_ = o.Messages()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	msgs := o.Messages()
	if len(msgs) != n || o.Len() != n {
		t.Fatalf("outbox has %d messages (Len %d), want %d", len(msgs), o.Len(), n)
	}
	var to []string
	for _, m := range msgs {
		to = append(to, m.To)
	}
	slices.Sort(to)
	to = slices.Compact(to)
	if len(to) != n {
		t.Errorf("outbox has %d distinct recipients, want %d", len(to), n)
	}
}
