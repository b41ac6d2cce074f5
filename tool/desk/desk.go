// Package desk is a small support desk for agents to work on: an in-memory
// store of orders and two tools, order_status (read-only, with a lookup the
// existence gate uses to refuse unknown orders) and send_reply (irreversible,
// with its address marked as a recipient for the gates). Sending only
// appends to the store, so an attempt is visible and harmless.
//
// It models the seed example of four gates, cheapest first: the tool must
// exist, the agent must hold the permission, the arguments must be well
// formed and name things that exist, and at most one irreversible operation
// may run per run. DemoPolicy states those rules as data.
//
// The tools will not enforce any of that policy: they check only the form of
// their arguments. Whether a call may run, which domains need a human's yes
// and how many replies a run may send are the gates' business.
package desk

import (
	"slices"
	"sync"
)

// Order is one customer order.
type Order struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Customer string `json:"customer"`
	Note     string `json:"note,omitempty"`
}

// Reply is one reply sent with send_reply.
type Reply struct {
	Address string `json:"address"`
	Body    string `json:"body"`
}

// Store holds orders and the replies sent. Safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	orders  map[string]Order
	replies []Reply
}

// NewStore returns a store of orders; a later order with the ID of an
// earlier one replaces it.
func NewStore(orders ...Order) *Store {
	s := &Store{orders: make(map[string]Order, len(orders))}
	for _, o := range orders {
		s.orders[o.ID] = o
	}
	return s
}

// Order returns the order with the given ID.
func (s *Store) Order(id string) (Order, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	return o, ok
}

// Replies returns a copy of the replies sent so far, in order.
func (s *Store) Replies() []Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.replies)
}

func (s *Store) send(r Reply) {
	s.mu.Lock()
	s.replies = append(s.replies, r)
	s.mu.Unlock()
}

// Demo returns the seed example's store: order ZAM-4471 (shipped) and order
// ZAM-1234 (processing), and no replies.
func Demo() *Store {
	return NewStore(
		Order{ID: "ZAM-4471", Status: "shipped", Customer: "kontakt@firma.pl",
			Note: "handed to the courier; delivery in 1 to 2 working days"},
		Order{ID: "ZAM-1234", Status: "processing", Customer: "kontakt@klient.pl",
			Note: "waiting for one item to come back in stock"},
	)
}

// Permissions an agent may hold in the seed example.
const (
	PermReads  = "reads"
	PermWrites = "writes"
)

// Policy is the seed example's rules as data, for the gates that enforce
// them; the tools of this package do not read it.
type Policy struct {
	// Domains are the recipients' domains a reply may go to without a
	// human's yes; a reply anywhere else needs one.
	Domains []string
	// MaxIrreversible is how many irreversible calls one run may make.
	MaxIrreversible int
	// Needs maps each tool to the permission an agent must hold to call it.
	Needs map[string]string
}

// DemoPolicy returns the seed example's rules: replies to firma.pl and
// klient.pl, one irreversible operation per run, order_status for agents
// that read and send_reply for agents that write.
func DemoPolicy() Policy {
	return Policy{
		Domains:         []string{"firma.pl", "klient.pl"},
		MaxIrreversible: 1,
		Needs:           map[string]string{NameOrderStatus: PermReads, NameSendReply: PermWrites},
	}
}
