package desk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"github.com/reinhq/rein/tool"
)

// The tools' names.
const (
	NameOrderStatus = "order_status"
	NameSendReply   = "send_reply"
)

// Bounds of send_reply's arguments.
const (
	MaxAddress = 254
	MaxBody    = 20000
)

// statusArgs are order_status's arguments.
type statusArgs struct {
	OrderID string `json:"order_id"`
}

var statusSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"order_id":{"type":"string","minLength":3,"maxLength":16,"pattern":"^[A-Z]{2,5}-[0-9]{1,10}$",` +
	`"description":"The order number: 2 to 5 capital letters, a hyphen and digits, like ZAM-4471"}},` +
	`"required":["order_id"],"additionalProperties":false}`)

// OrderStatus returns the order_status tool, which reads orders from s. Its
// lookup (tool.Exister) reports an unknown order as tool.ErrNotExist, so the
// existence gate can refuse the call before it runs; Run says the same.
func OrderStatus(s *Store) tool.Tool {
	lookup := func(ctx context.Context, a statusArgs) (Order, error) {
		if err := ctx.Err(); err != nil {
			return Order{}, err
		}
		o, ok := s.Order(a.OrderID)
		if !ok {
			return Order{}, fmt.Errorf("order %s %w: check the number with the customer's message and do not retry the same number", a.OrderID, tool.ErrNotExist)
		}
		return o, nil
	}
	return tool.New(tool.Spec{
		Name: NameOrderStatus,
		Description: "Look up a customer's order by its number (like ZAM-4471): its status, the customer's address and a note. " +
			"Use the number exactly as the customer gave it; an order that does not exist is reported as such.",
		Schema: statusSchema,
		Effect: tool.ReadOnly,
	}, func(ctx context.Context, a statusArgs) (string, error) {
		o, err := lookup(ctx, a)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "order %s\nstatus: %s\ncustomer: %s\n", o.ID, o.Status, o.Customer)
		if o.Note != "" {
			fmt.Fprintf(&b, "note: %s\n", o.Note)
		}
		return b.String(), nil
	}).WithLookup(func(ctx context.Context, a statusArgs) error {
		_, err := lookup(ctx, a)
		return err
	})
}

// replyArgs are send_reply's arguments.
type replyArgs struct {
	Address string `json:"address"`
	Body    string `json:"body"`
}

// Check requires one plain address and a body with something in it.
func (a *replyArgs) Check() error {
	if err := CheckAddress(a.Address); err != nil {
		return err
	}
	if strings.TrimSpace(a.Body) == "" {
		return errors.New(`"body" is blank: write the reply`)
	}
	return nil
}

// ErrAddress marks an address send_reply does not accept.
var ErrAddress = errors.New("invalid address")

// CheckAddress accepts one plain ASCII email address, name@example.com: no
// display name, angle brackets, comments, quotes or spaces; no CR, LF or other
// control characters; exactly one "@"; a dot-atom local part of at most 64
// characters; a domain of at least two dot-separated labels of letters,
// digits and hyphens, the last one not all digits (no IP addresses, no
// trailing dot). The error wraps
// ErrAddress and says what to send instead.
func CheckAddress(addr string) error {
	bad := func(why string) error {
		return fmt.Errorf(`%w: "address" must be one plain email address like name@example.com, not %q: %s`, ErrAddress, addr, why)
	}
	switch {
	case addr == "":
		return fmt.Errorf(`%w: "address" is empty: give one email address like name@example.com`, ErrAddress)
	case len(addr) > MaxAddress:
		return bad(fmt.Sprintf("it is %d bytes long, and at most %d are allowed", len(addr), MaxAddress))
	}
	for _, r := range addr {
		switch {
		case r == ' ':
			return bad("it holds a space: give only the address, with no name, brackets or second address")
		case r < ' ' || r == 0x7f:
			return bad("it holds a line break or another control character")
		case r > 0x7f:
			return bad("it may hold only ASCII characters (write an international domain in its xn-- form)")
		}
	}
	if n := strings.Count(addr, "@"); n != 1 {
		return bad(fmt.Sprintf(`it has %d "@" signs, and an address has exactly one`, n))
	}
	local, domain, _ := strings.Cut(addr, "@")
	if err := checkLocal(local); err != "" {
		return bad(err)
	}
	if err := checkDomain(domain); err != "" {
		return bad(err)
	}
	// The standard parser must agree that this is exactly one bare address.
	if p, err := mail.ParseAddress(addr); err != nil || p.Name != "" || p.Address != addr {
		return bad("it is not a single bare address")
	}
	return nil
}

// atext are the characters of a dot-atom besides letters and digits (RFC 5322).
const atext = "!#$%&'*+-/=?^_`{|}~"

func checkLocal(local string) string {
	switch {
	case local == "":
		return `nothing comes before the "@"`
	case len(local) > 64:
		return `the part before the "@" is longer than 64 characters`
	case local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, ".."):
		return `the part before the "@" may not start or end with a dot or hold two dots in a row`
	}
	for i := range len(local) {
		if c := local[i]; !isAlnum(c) && c != '.' && !strings.ContainsRune(atext, rune(c)) {
			return fmt.Sprintf(`the part before the "@" may not hold %q`, c)
		}
	}
	return ""
}

func checkDomain(domain string) string {
	if domain == "" {
		return `nothing comes after the "@"`
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return "the domain has no dot"
	}
	if tld := labels[len(labels)-1]; strings.Trim(tld, "0123456789") == "" && tld != "" {
		return "the domain must end in a name, not a number (no IP addresses)"
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "the domain's parts between dots must be 1 to 63 characters"
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "a part of the domain may not start or end with a hyphen"
		}
		for i := range len(l) {
			if c := l[i]; !isAlnum(c) && c != '-' {
				return fmt.Sprintf("the domain may hold only letters, digits, hyphens and dots, not %q", c)
			}
		}
	}
	return ""
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

var replySchema = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
	`"address":{"type":"string","minLength":3,"maxLength":%d,"description":"One email address, like name@example.com"},`+
	`"body":{"type":"string","minLength":1,"maxLength":%d,"description":"The reply's text"}},`+
	`"required":["address","body"],"additionalProperties":false}`, MaxAddress, MaxBody))

// SendReply returns the send_reply tool, which appends to s's replies. It is
// classed irreversible and marks "address" as a recipient, so the gates ask a
// human and check where the reply goes.
func SendReply(s *Store) tool.Tool {
	return tool.New(tool.Spec{
		Name: NameSendReply,
		Description: "Send a reply email to a customer: one address, and the text. Sending cannot be undone, so it needs the user's approval, " +
			"and a run may send only a few. Reply only to the customer the message is about, once.",
		Schema: replySchema,
		Effect: tool.Irreversible,
		Roles:  map[string]tool.Role{"address": tool.RoleRecipient},
	}, func(ctx context.Context, a replyArgs) (string, error) {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("the reply to %s was not sent: %w", a.Address, err)
		}
		s.send(Reply(a))
		return fmt.Sprintf("Sent the reply to %s.", a.Address), nil
	})
}
