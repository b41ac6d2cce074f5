// Package bank is a bank account as an environment for agents: an
// in-memory Ledger (the account's IBAN and balance, its transactions and
// its scheduled payments) and the tools a model uses on it: get_balance,
// get_iban, list_transactions, list_scheduled_transactions (read-only),
// send_money and update_scheduled_transaction (irreversible).
//
// Money is exact: amounts are Cents (int64), never floats; the model
// writes them as JSON numbers with at most two decimals. Recipients are
// IBANs, checked (ISO 13616 mod 97) before anything moves.
//
// Transaction subjects are written by whoever sent the money, so they are
// the attacker's channel in evaluations: list_transactions returns them as
// they are, and the tools mark recipient and amount as sensitive
// (tool.RoleRecipient, tool.RoleAmount) for the data-flow gate.
//
// It is not a bank: no currencies, no fees, no real clearing; a transfer
// settles the moment it is sent.
package bank

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Transaction is money that moved, in or out of the account.
type Transaction struct {
	ID        int    `json:"id"`
	Sender    string `json:"sender"`
	Recipient string `json:"recipient"`
	Amount    Cents  `json:"amount"`
	Subject   string `json:"subject"`
	Date      string `json:"date"` // YYYY-MM-DD
	Recurring bool   `json:"recurring"`
}

// Scheduled is a payment the account will make on Date (and, when
// Recurring, every month after).
type Scheduled struct {
	ID        int    `json:"id"`
	Recipient string `json:"recipient"`
	Amount    Cents  `json:"amount"`
	Subject   string `json:"subject"`
	Date      string `json:"date"`
	Recurring bool   `json:"recurring"`
}

// Account is a ledger's starting state.
type Account struct {
	IBAN     string
	Balance  Cents
	Currency string // default EUR
	// Today is the date a transfer without one is made on (YYYY-MM-DD);
	// default: the latest transaction's date, else the current UTC date.
	Today        string
	Transactions []Transaction // oldest first; IDs of 0 are numbered
	Scheduled    []Scheduled
}

// Ledger is one account's state. It is safe for concurrent use.
type Ledger struct {
	mu       sync.Mutex
	iban     string
	currency string
	today    string
	balance  Cents
	txs      []Transaction
	sched    []Scheduled
	nextID   int
	seeded   int // how many transactions the account started with
}

// NewLedger returns a ledger in the state a describes. Its data is copied.
func NewLedger(a Account) *Ledger {
	l := &Ledger{iban: NormalizeIBAN(a.IBAN), currency: a.Currency, today: a.Today, balance: a.Balance,
		txs: slices.Clone(a.Transactions), sched: slices.Clone(a.Scheduled)}
	if l.currency == "" {
		l.currency = "EUR"
	}
	for _, t := range l.txs {
		l.nextID = max(l.nextID, t.ID)
	}
	for _, s := range l.sched {
		l.nextID = max(l.nextID, s.ID)
	}
	for i := range l.txs {
		if l.txs[i].ID == 0 {
			l.nextID++
			l.txs[i].ID = l.nextID
		}
		if l.today == "" || l.txs[i].Date > l.today {
			l.today = l.txs[i].Date
		}
	}
	for i := range l.sched {
		if l.sched[i].ID == 0 {
			l.nextID++
			l.sched[i].ID = l.nextID
		}
	}
	if l.today == "" {
		l.today = time.Now().UTC().Format(time.DateOnly)
	}
	l.seeded = len(l.txs)
	return l
}

// IBAN returns the account's own IBAN.
func (l *Ledger) IBAN() string { return l.iban }

// Currency returns the account's currency code.
func (l *Ledger) Currency() string { return l.currency }

// Balance returns the current balance.
func (l *Ledger) Balance() Cents {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.balance
}

// Scheduled returns the scheduled payments, by id.
func (l *Ledger) Scheduled() []Scheduled {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.sched)
}

// Sent returns the transfers made since the ledger was created (by
// send_money), oldest first.
func (l *Ledger) Sent() []Transaction {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.txs[l.seeded:])
}

// SentTo returns the transfers made since the ledger was created to iban
// (printed or electronic form).
func (l *Ledger) SentTo(iban string) []Transaction {
	want := NormalizeIBAN(iban)
	var out []Transaction
	for _, t := range l.Sent() {
		if t.Recipient == want {
			out = append(out, t)
		}
	}
	return out
}

// Recent returns the n most recent transactions, most recent first.
func (l *Ledger) Recent(n int) []Transaction {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = min(max(n, 0), len(l.txs))
	out := make([]Transaction, 0, n)
	for i := len(l.txs) - 1; i >= len(l.txs)-n; i-- {
		out = append(out, l.txs[i])
	}
	return out
}

// Send moves amount from the account to recipient, which must be a valid
// IBAN other than the account's own, on date (YYYY-MM-DD; "" for today).
func (l *Ledger) Send(recipient string, amount Cents, subject, date string) (Transaction, error) {
	if err := CheckIBAN(recipient); err != nil {
		return Transaction{}, err
	}
	if amount <= 0 || amount > MaxAmount {
		return Transaction{}, fmt.Errorf("amount %s is out of range: it must be more than 0 and at most %s", amount, MaxAmount)
	}
	to := NormalizeIBAN(recipient)
	l.mu.Lock()
	defer l.mu.Unlock()
	if to == l.iban {
		return Transaction{}, fmt.Errorf("%s is this account's own IBAN: money cannot be sent to itself", to)
	}
	if amount > l.balance {
		return Transaction{}, fmt.Errorf("the balance is %s %s, less than the %s to send: nothing was sent; send less or ask the user", l.balance, l.currency, amount)
	}
	if date == "" {
		date = l.today
	}
	l.nextID++
	t := Transaction{ID: l.nextID, Sender: l.iban, Recipient: to, Amount: amount, Subject: subject, Date: date}
	l.txs = append(l.txs, t)
	l.balance -= amount
	return t, nil
}

// Schedule adds a payment of amount to recipient on date (YYYY-MM-DD; ""
// for today), repeating monthly when recurring, and returns it. No money
// moves now; recipient must be a valid IBAN other than the account's own.
func (l *Ledger) Schedule(recipient string, amount Cents, subject, date string, recurring bool) (Scheduled, error) {
	if err := CheckIBAN(recipient); err != nil {
		return Scheduled{}, err
	}
	if amount <= 0 || amount > MaxAmount {
		return Scheduled{}, fmt.Errorf("amount %s is out of range: it must be more than 0 and at most %s", amount, MaxAmount)
	}
	to := NormalizeIBAN(recipient)
	l.mu.Lock()
	defer l.mu.Unlock()
	if to == l.iban {
		return Scheduled{}, fmt.Errorf("%s is this account's own IBAN: a payment to itself cannot be scheduled", to)
	}
	if date == "" {
		date = l.today
	}
	l.nextID++
	s := Scheduled{ID: l.nextID, Recipient: to, Amount: amount, Subject: subject, Date: date, Recurring: recurring}
	l.sched = append(l.sched, s)
	return s, nil
}

// Change is an update to a scheduled payment; nil fields stay as they are.
type Change struct {
	Recipient *string
	Amount    *Cents
	Subject   *string
	Date      *string
	Recurring *bool
}

// Update changes the scheduled payment id and returns it as it is now.
func (l *Ledger) Update(id int, c Change) (Scheduled, error) {
	if c.Recipient != nil {
		if err := CheckIBAN(*c.Recipient); err != nil {
			return Scheduled{}, err
		}
	}
	if c.Amount != nil && (*c.Amount <= 0 || *c.Amount > MaxAmount) {
		return Scheduled{}, fmt.Errorf("amount %s is out of range: it must be more than 0 and at most %s", *c.Amount, MaxAmount)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.IndexFunc(l.sched, func(s Scheduled) bool { return s.ID == id })
	if i < 0 {
		return Scheduled{}, fmt.Errorf("no scheduled transaction has id %d: list_scheduled_transactions shows the ids", id)
	}
	s := &l.sched[i]
	if c.Recipient != nil {
		s.Recipient = NormalizeIBAN(*c.Recipient)
	}
	if c.Amount != nil {
		s.Amount = *c.Amount
	}
	if c.Subject != nil {
		s.Subject = *c.Subject
	}
	if c.Date != nil {
		s.Date = *c.Date
	}
	if c.Recurring != nil {
		s.Recurring = *c.Recurring
	}
	return *s, nil
}

// hasScheduled reports whether a scheduled payment has the id.
func (l *Ledger) hasScheduled(id int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.sched, func(s Scheduled) bool { return s.ID == id })
}
