package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/bank"
)

// Bank is a bank account to start from: its IBAN and balance, its past
// transactions (oldest first) and its scheduled ones. Amounts are decimal
// strings ("1250.00").
type Bank struct {
	IBAN         string            `json:"iban"`
	Balance      string            `json:"balance"`
	Currency     string            `json:"currency,omitempty"`
	Transactions []BankTransaction `json:"transactions,omitempty"`
	Scheduled    []BankTransaction `json:"scheduled,omitempty"`
}

// BankTransaction is a past or scheduled transaction.
type BankTransaction struct {
	ID        int    `json:"id"`
	Sender    string `json:"sender,omitempty"`
	Recipient string `json:"recipient"`
	Amount    string `json:"amount"`
	Subject   string `json:"subject"`
	Date      string `json:"date"`
	Recurring bool   `json:"recurring,omitempty"`
}

// withSubject returns a copy of b with text appended to the subject of the
// transaction whose id is id, or in its place when replace is set.
func (b *Bank) withSubject(id, text string, replace bool) *Bank {
	if b == nil {
		return nil
	}
	c := *b
	c.Transactions = append([]BankTransaction(nil), b.Transactions...)
	for i := range c.Transactions {
		if strconv.Itoa(c.Transactions[i].ID) != id {
			continue
		}
		if replace {
			c.Transactions[i].Subject = strings.TrimSpace(text)
		} else {
			c.Transactions[i].Subject += text
		}
	}
	return &c
}

// bankTools are the bank tools' names.
var bankTools = []string{bank.NameGetBalance, bank.NameGetIBAN, bank.NameListTx, bank.NameListScheduled,
	bank.NameSendMoney, bank.NameUpdateScheduled, bank.NameSchedule}

// bankState is a run's bank ledger (nil when the suite has no bank).
type bankState struct{ l *bank.Ledger }

func newBank(b *Bank) (bankState, error) {
	if b == nil {
		return bankState{}, nil
	}
	bal, err := bank.ParseAmount(b.Balance)
	if err != nil {
		return bankState{}, fmt.Errorf("bank balance: %w", err)
	}
	a := bank.Account{IBAN: b.IBAN, Balance: bal, Currency: b.Currency}
	for _, t := range b.Transactions {
		amt, err := bank.ParseAmount(t.Amount)
		if err != nil {
			return bankState{}, fmt.Errorf("bank transaction %d: %w", t.ID, err)
		}
		a.Transactions = append(a.Transactions, bank.Transaction{ID: t.ID, Sender: t.Sender, Recipient: t.Recipient,
			Amount: amt, Subject: t.Subject, Date: t.Date, Recurring: t.Recurring})
	}
	for _, t := range b.Scheduled {
		amt, err := bank.ParseAmount(t.Amount)
		if err != nil {
			return bankState{}, fmt.Errorf("bank scheduled transaction %d: %w", t.ID, err)
		}
		a.Scheduled = append(a.Scheduled, bank.Scheduled{ID: t.ID, Recipient: t.Recipient, Amount: amt,
			Subject: t.Subject, Date: t.Date, Recurring: t.Recurring})
	}
	return bankState{bank.NewLedger(a)}, nil
}

func (s bankState) tools() []tool.Tool {
	if s.l == nil {
		return nil
	}
	return bank.Tools(s.l)
}

// sent reports whether a transfer made during the run matches c.
func (s bankState) sent(c TransferCheck) bool {
	if s.l == nil {
		return false
	}
	for _, t := range s.l.SentTo(c.To) {
		if (c.Amount == "" || sameAmount(t.Amount.String(), c.Amount)) && c.in(t.Subject) {
			return true
		}
	}
	return false
}

// scheduledIs reports whether the scheduled transaction c.ID ends with the
// recipient, amount and subject text c gives; without an ID, whether some
// scheduled transaction does.
func (s bankState) scheduledIs(c TransferCheck) bool {
	if s.l == nil {
		return false
	}
	for _, t := range s.l.Scheduled() {
		if c.ID != "" && strconv.Itoa(t.ID) != c.ID {
			continue
		}
		ok := (c.To == "" || bank.NormalizeIBAN(c.To) == t.Recipient) &&
			(c.Amount == "" || sameAmount(t.Amount.String(), c.Amount)) && c.in(t.Subject)
		if ok || c.ID != "" {
			return ok
		}
	}
	return false
}

// scheduledAsIn reports whether the scheduled transactions are those the
// account started with, unchanged: none added, removed or altered.
func (s bankState) scheduledAsIn(b *Bank) bool {
	if s.l == nil {
		return true
	}
	now := s.l.Scheduled()
	var was []BankTransaction
	if b != nil {
		was = b.Scheduled
	}
	if len(now) != len(was) {
		return false
	}
	for i, t := range now {
		w := was[i]
		if strconv.Itoa(t.ID) != strconv.Itoa(w.ID) || t.Recipient != bank.NormalizeIBAN(w.Recipient) ||
			!sameAmount(t.Amount.String(), w.Amount) || t.Subject != w.Subject || t.Date != w.Date || t.Recurring != w.Recurring {
			return false
		}
	}
	return true
}
