package computer

import (
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// DefaultWords are the words and phrases that make an action irreversible
// when they name what it does: pay, buy, order, confirm, send, submit,
// delete, remove, publish, transfer, in English, the Scandinavian
// languages, German, Polish, Finnish, Dutch, French, Spanish and Italian.
// Matching is on whole words, case-insensitive, after Unicode
// normalisation, so "Pay" and "PAY NOW" match "pay" but "Payload" does not.
func DefaultWords() []string {
	return []string{
		// English
		"pay", "buy", "purchase", "order", "confirm", "send", "submit", "delete", "remove",
		"publish", "transfer", "place order", "pay now", "erase", "destroy",
		// Swedish
		"betala", "köp", "köpa", "beställ", "beställa", "bekräfta", "skicka", "radera",
		"ta bort", "publicera", "överför", "överföring", "genomför",
		// Norwegian, Danish
		"betal", "kjøp", "køb", "bestill", "bestil", "bekreft", "bekræft", "slett", "slet",
		"fjern", "publiser", "udgiv", "overfør", "overføre",
		// German
		"zahlen", "bezahlen", "kaufen", "bestellen", "bestätigen", "senden", "absenden",
		"löschen", "entfernen", "veröffentlichen", "überweisen", "jetzt kaufen",
		// Polish
		"zapłać", "płacę", "kup", "kupuję", "zamów", "zamawiam", "potwierdź", "wyślij",
		"usuń", "opublikuj", "przelej", "przelew",
		// Finnish
		"maksa", "osta", "tilaa", "vahvista", "lähetä", "poista", "julkaise", "siirrä",
		// Dutch
		"betalen", "kopen", "bevestigen", "verzenden", "versturen", "verwijderen",
		"publiceren", "overmaken",
		// French
		"payer", "acheter", "commander", "confirmer", "envoyer", "supprimer", "publier",
		"virement", "transférer",
		// Spanish, Italian
		"pagar", "comprar", "confirmar", "enviar", "eliminar", "borrar", "publicar",
		"transferir", "paga", "acquista", "compra", "ordina", "conferma", "invia", "elimina",
		"pubblica", "trasferisci",
	}
}

// Words matches texts against a list of words and phrases.
type Words struct {
	phrases [][]string
}

// NewWords returns a matcher for list; each entry is a word or a phrase of
// several words. Empty entries are ignored.
func NewWords(list []string) Words {
	var w Words
	for _, s := range list {
		if t := tokens(s); len(t) > 0 {
			w.phrases = append(w.phrases, t)
		}
	}
	return w
}

// Match reports the first entry found as whole words in any of texts.
func (w Words) Match(texts ...string) (string, bool) {
	for _, s := range texts {
		t := tokens(s)
		for _, p := range w.phrases {
			for i := 0; i+len(p) <= len(t); i++ {
				if slices.Equal(t[i:i+len(p)], p) {
					return strings.Join(p, " "), true
				}
			}
		}
	}
	return "", false
}

// MatchAll returns every entry found as whole words in any of texts, each
// once, in the order of the list.
func (w Words) MatchAll(texts ...string) []string {
	toks := make([][]string, len(texts))
	for i, s := range texts {
		toks[i] = tokens(s)
	}
	var out []string
	for _, p := range w.phrases {
	search:
		for _, t := range toks {
			for i := 0; i+len(p) <= len(t); i++ {
				if slices.Equal(t[i:i+len(p)], p) {
					out = append(out, strings.Join(p, " "))
					break search
				}
			}
		}
	}
	return out
}

// tokens splits s into lower-case words. Format characters (zero-width
// spaces and joiners, soft hyphens) are dropped first, so "De\u200blete"
// is one word; letters, marks and digits make words, anything else splits.
// CamelCase in URLs ("/confirmPayment") splits too.
func tokens(s string) []string {
	s = norm.NFC.String(s)
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cf, r):
			continue
		case unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}
