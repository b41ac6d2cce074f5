// Package mail is a stand-in for an email service: send_email appends to an
// in-memory outbox and sends nothing, so an attempt to send is visible and
// harmless; list_inbox and read_email read a fixed in-memory inbox.
// send_email is classed irreversible, as a real one would be, so the gates
// treat it exactly as they would treat real mail.
package mail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"sync"

	"github.com/reinhq/rein/tool"
)

// Message is one sent email.
type Message struct {
	To      string `json:"to"`
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body"`
}

// Outbox records the messages sent during a session. Safe for concurrent use.
type Outbox struct {
	mu   sync.Mutex
	msgs []Message
}

// Messages returns a copy of the messages sent so far.
func (o *Outbox) Messages() []Message {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Message(nil), o.msgs...)
}

// Len returns how many messages were sent.
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.msgs)
}

func (o *Outbox) add(m Message) {
	o.mu.Lock()
	o.msgs = append(o.msgs, m)
	o.mu.Unlock()
}

// SendArgs are send_email's arguments.
type SendArgs struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

// Check requires one plain address and a body.
func (a *SendArgs) Check() error {
	if a.To == "" {
		return errors.New(`"to" is required: one email address, like name@example.com`)
	}
	addr, err := mail.ParseAddress(a.To)
	if err != nil || addr.Address != a.To {
		return fmt.Errorf(`"to" must be one plain email address like name@example.com, not %q`, a.To)
	}
	if a.Body == "" {
		return errors.New(`"body" is required`)
	}
	return nil
}

var sendSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"to":{"type":"string","minLength":3,"maxLength":254,"description":"One email address"},` +
	`"subject":{"type":"string","maxLength":998},` +
	`"body":{"type":"string","minLength":1,"maxLength":1048576}},` +
	`"required":["to","body"],"additionalProperties":false}`)

// SendEmail returns the send_email tool, which appends to o.
func SendEmail(o *Outbox) tool.Tool {
	return tool.New(tool.Spec{
		Name:        "send_email",
		Description: "Send an email to one address. Sending cannot be undone, so it needs the user's approval. Only send what the user asked you to send.",
		Schema:      sendSchema,
		Effect:      tool.Irreversible,
		Roles:       map[string]tool.Role{"to": tool.RoleRecipient},
	}, func(_ context.Context, a SendArgs) (string, error) {
		o.add(Message(a))
		return fmt.Sprintf("Sent to %s.", a.To), nil
	})
}
