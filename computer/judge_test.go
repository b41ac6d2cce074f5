package computer_test

import (
	"testing"

	"github.com/reinhq/rein/computer"
	"github.com/reinhq/rein/gate"
)

func TestWordsMatch(t *testing.T) {
	w := computer.NewWords(computer.DefaultWords())
	for _, c := range []struct {
		text string
		want bool
	}{
		{"Pay 129 kr", true}, {"PAY NOW", true}, {"Betala", true}, {"Skicka", true},
		{"Ta bort kontot", true}, {"Slett konto", true}, {"Wyślij", true}, {"Usuń", true},
		{"Löschen", true}, {"LÖSCHEN", true}, {"Jetzt kaufen", true}, {"Bestellen", true},
		{"Zahlen", true}, {"Confirm", true}, {"De\u200blete", true}, {"/account/delete", true},
		{"/confirmPayment", true}, {"Submit order", true}, {"Överför pengar", true},
		// Not whole words, or harmless.
		{"Payload viewer", false}, {"Sender address", false}, {"Read the news", false},
		{"Tabort", false}, {"Add to cart", false}, {"Open details", false}, {"Continue", false},
		{"Ta en titt", false}, {"bortom", false},
	} {
		_, got := w.Match(c.text)
		if got != c.want {
			t.Errorf("Match(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	custom := computer.NewWords([]string{"approve invoice"})
	if _, ok := custom.Match("Approve  INVOICE #12"); !ok {
		t.Error("a configured phrase does not match across spacing and case")
	}
	if _, ok := custom.Match("Delete"); ok {
		t.Error("a configured list still matches the defaults")
	}
}

func TestJudge(t *testing.T) {
	p := computer.Policy{Words: computer.NewWords(computer.DefaultWords())}
	click := computer.Action{Kind: computer.Click, X: 1, Y: 1}
	enter := computer.Action{Kind: computer.Key, Name: "Enter"}
	typ := computer.Action{Kind: computer.Type, Text: "x"}
	for _, c := range []struct {
		name string
		a    computer.Action
		el   computer.Element
		want gate.Decision
	}{
		{"plain button", click, computer.Element{Found: true, Tag: "button", Texts: []string{"Add to cart"}}, gate.Allow},
		{"pay button", click, computer.Element{Found: true, Tag: "button", Texts: []string{"Pay 129 kr"}}, gate.Ask},
		{"innocent text, aria-label Delete", click, computer.Element{Found: true, Tag: "button", Texts: []string{"Delete account", "OK"}}, gate.Ask},
		{"Continue in a form posting to /pay", click, computer.Element{Found: true, Tag: "a", Texts: []string{"Continue"}, FormAction: "/pay", Submits: true}, gate.Ask},
		{"text field in a form posting to /pay", click, computer.Element{Found: true, Tag: "input", Editable: true, FormAction: "/pay"}, gate.Allow},
		{"frame from another origin", click, computer.Element{Found: true, Tag: "iframe", Opaque: true}, gate.Ask},
		{"nothing under the point", click, computer.Element{}, gate.Allow},
		{"Enter in a field of a send form", enter, computer.Element{Found: true, Tag: "input", Editable: true, FormAction: "/mail/send"}, gate.Ask},
		{"Enter in a field, submit says Skicka", enter, computer.Element{Found: true, Tag: "input", Editable: true, FormAction: "/m", Submit: []string{"Skicka"}}, gate.Ask},
		{"Enter in a search form", enter, computer.Element{Found: true, Tag: "input", Editable: true, FormAction: "/search", Submit: []string{"Search"}}, gate.Allow},
		{"Enter on a focused Delete button", enter, computer.Element{Found: true, Tag: "button", Texts: []string{"Delete"}}, gate.Ask},
		{"Space on a focused Delete button", computer.Action{Kind: computer.Key, Name: "Space"}, computer.Element{Found: true, Tag: "button", Texts: []string{"Delete"}}, gate.Ask},
		{"Tab on a focused Delete button", computer.Action{Kind: computer.Key, Name: "Tab"}, computer.Element{Found: true, Tag: "button", Texts: []string{"Delete"}}, gate.Allow},
		{"typing a dangerous word is not an action", typ, computer.Element{Found: true, Tag: "textarea", Editable: true}, gate.Allow},
		{"typing into a password field", typ, computer.Element{Found: true, Tag: "input", InputType: "password", Editable: true}, gate.Deny},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := p.Judge(c.a, c.el)
			if v.Decision != c.want {
				t.Errorf("%s on %+v: %s (%s), want %s", c.a, c.el, v.Decision, v.Reason, c.want)
			}
		})
	}
	off := computer.Policy{Off: true, Words: p.Words}
	if v := off.Judge(click, computer.Element{Found: true, Texts: []string{"Delete"}}); v.Decision != gate.Allow {
		t.Error("guards off still asks")
	}
}

func TestParseScriptErrors(t *testing.T) {
	for _, c := range []struct{ name, js string }{
		{"empty", `{"steps":[]}`},
		{"unknown field", `{"steps":[{"action":"click","x":1,"y":1,"button":"right"}]}`},
		{"unknown action", `{"steps":[{"action":"drag"}]}`},
		{"unknown key", `{"steps":[{"action":"key","name":"F13"}]}`},
		{"no text", `{"steps":[{"action":"type"}]}`},
		{"trailing data", `{"steps":[{"action":"wait"}]} {}`},
	} {
		if _, err := computer.ParseScript([]byte(c.js)); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
