package contract_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/reinhq/rein/gate/contract"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     string // the rendering, or a substring of the error
		err      bool
	}{
		{"one effect", `{"effects":[{"tool":"send_money","times":1,"args":{"recipient":{"from":"read_file"},"amount":{"is":98.70},"subject":"any"}}]}`,
			"send_money ×1: amount = 98.70, recipient from read_file, subject any", false},
		{"times defaults to 1", `{"effects":[{"tool":"send_email","args":{"to":{"is":"bob@example.org"}}}]}`,
			`send_email ×1: to = "bob@example.org"`, false},
		{"no side effects", `{"effects":[]}`, "no side effects", false},
		{"syntax error has line and column", "{\"effects\":[\n {\"tool\": }]}", "line 2, column 11", true},
		{"unknown field", `{"effects":[{"tool":"x","count":2}]}`, `unknown field "count"`, true},
		{"no tool", `{"effects":[{"times":2}]}`, `effect 1 has no "tool"`, true},
		{"times out of range", `{"effects":[{"tool":"x","times":1000}]}`, `"times" is 1000`, true},
		{"negative times", `{"effects":[{"tool":"x","times":-1}]}`, `"times" is -1`, true},
		{"two bindings", `{"effects":[{"tool":"x","args":{"a":{"is":1,"from":"y"}}}]}`, "exactly one of", true},
		{"empty binding", `{"effects":[{"tool":"x","args":{"a":{}}}]}`, "exactly one of", true},
		{"null literal", `{"effects":[{"tool":"x","args":{"a":{"is":null}}}]}`, `"is": null binds nothing`, true},
		{"a bare string that is not any", `{"effects":[{"tool":"x","args":{"a":"all"}}]}`, `binding "all"`, true},
		{"one field of a named read", `{"effects":[{"tool":"send_money","args":{"recipient":{"from":"read_file","of":"bill.txt","field":"iban"},"amount":{"from":"list_transactions","field":"amount","where":"rent"}}}]}`,
			`send_money ×1: amount from the "amount" of list_transactions where "rent", recipient from the "iban" of read_file bill.txt`, false},
		{"of without from", `{"effects":[{"tool":"x","args":{"a":{"is":1,"of":"bill.txt"}}}]}`, `give "from" too`, true},
		{"where without field", `{"effects":[{"tool":"x","args":{"a":{"from":"read_file","where":"rent"}}}]}`, `give the field too`, true},
		{"trailing data", `{"effects":[]} {}`, "unexpected data after", true},
		{"control characters are not rendered", `{"effects":[{"tool":"x","args":{"a":{"is":"ok\u001b[2Jgone"}}}]}`, `x ×1: a = "ok\u001b[2Jgone"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := contract.Parse([]byte(tt.in))
			if tt.err {
				if err == nil || !errors.Is(err, contract.ErrContract) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want ErrContract saying %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

// The example file in testdata (docs/contract.md points at it) parses.
func TestExampleFile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/pay-bill.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if c.Empty() || !strings.Contains(c.String(), "send_money ×1") {
		t.Errorf("example contract renders as %q", c.String())
	}
}

// FuzzParse: any input either parses into a contract whose rendering has
// no control characters and which parses again to the same rendering, or
// fails with ErrContract.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"effects":[]}`, `{"effects":[{"tool":"send_money","times":2,"args":{"amount":{"is":1},"to":"any","x":{"from":"read_file"}}}]}`, `{`, `{"effects":[{"tool":""}]}`, `{"effects":[{"tool":"send_money","args":{"amount":{"from":"read_file","of":"bill.txt","field":"amount due","where":"may"}}}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := contract.Parse(data)
		if err != nil {
			if !errors.Is(err, contract.ErrContract) {
				t.Fatalf("error %v does not wrap ErrContract", err)
			}
			return
		}
		s := c.String()
		for _, r := range s {
			if r != '\n' && (r < 0x20 || r == 0x7f) {
				t.Fatalf("rendering %q holds a control character", s)
			}
		}
		for _, e := range c.Effects {
			if e.Times < 1 || e.Times > contract.MaxTimes {
				t.Fatalf("times %d passed the parser", e.Times)
			}
		}
	})
}
