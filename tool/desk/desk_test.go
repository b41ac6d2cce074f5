package desk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/gate"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/desk"
)

func TestSpecs(t *testing.T) {
	t.Parallel()
	s := desk.Demo()
	tests := []struct {
		tl         tool.Tool
		name       string
		effect     tool.Effect
		recipients []string
	}{
		{desk.OrderStatus(s), "order_status", tool.ReadOnly, nil},
		{desk.SendReply(s), "send_reply", tool.Irreversible, []string{"address"}},
	}
	for _, tt := range tests {
		spec := tt.tl.Spec()
		if spec.Name != tt.name || spec.Effect != tt.effect {
			t.Errorf("%s: name %q, effect %v; want %q, %v", tt.name, spec.Name, spec.Effect, tt.name, tt.effect)
		}
		if got := spec.ArgsWith(tool.RoleRecipient); !slices.Equal(got, tt.recipients) {
			t.Errorf("%s: recipient arguments %v, want %v", tt.name, got, tt.recipients)
		}
		var sch map[string]any
		if err := json.Unmarshal(spec.Schema, &sch); err != nil || sch["additionalProperties"] != false {
			t.Errorf("%s: schema %s must be JSON with additionalProperties false (%v)", tt.name, spec.Schema, err)
		}
		if _, ok := tt.tl.(tool.Exister); !ok {
			t.Errorf("%s is not a tool.Exister", tt.name)
		}
	}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	s := desk.Demo()
	for id, status := range map[string]string{"ZAM-4471": "shipped", "ZAM-1234": "processing"} {
		if o, ok := s.Order(id); !ok || o.Status != status {
			t.Errorf("Demo order %s = %+v, %v; want status %s", id, o, ok, status)
		}
	}
	if _, ok := s.Order("ZAM-9999"); ok {
		t.Error("Demo has ZAM-9999")
	}
	if len(s.Replies()) != 0 {
		t.Errorf("Demo has replies: %+v", s.Replies())
	}
	p := desk.DemoPolicy()
	if !slices.Equal(p.Domains, []string{"firma.pl", "klient.pl"}) || p.MaxIrreversible != 1 ||
		p.Needs["order_status"] != desk.PermReads || p.Needs["send_reply"] != desk.PermWrites || len(p.Needs) != 2 {
		t.Errorf("DemoPolicy = %+v", p)
	}
}

func TestNewStoreLaterReplaces(t *testing.T) {
	t.Parallel()
	s := desk.NewStore(desk.Order{ID: "AB-1", Status: "old"}, desk.Order{ID: "AB-1", Status: "new"})
	if o, _ := s.Order("AB-1"); o.Status != "new" {
		t.Errorf("order AB-1 = %+v, want the later one", o)
	}
}

func TestOrderStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id      string
		want    string // Run's result; "" when the order does not exist
		missing bool
	}{
		{"ZAM-4471", "order ZAM-4471\nstatus: shipped\ncustomer: kontakt@firma.pl\nnote: handed to the courier; delivery in 1 to 2 working days\n", false},
		{"ZAM-1234", "order ZAM-1234\nstatus: processing\ncustomer: kontakt@klient.pl\nnote: waiting for one item to come back in stock\n", false},
		{"ZAM-9999", "", true},
		{"ZAM-44710", "", true},
		{"ZAM-0", "", true},
		{"AB-4471", "", true},
		{"ABCDE-1234567890", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			st := desk.OrderStatus(desk.Demo())
			args := json.RawMessage(fmt.Sprintf(`{"order_id":%q}`, tt.id))
			exErr := st.(tool.Exister).Exists(t.Context(), args)
			out, err := st.Run(t.Context(), args)
			if !tt.missing {
				if exErr != nil || err != nil {
					t.Fatalf("order %s: Exists %v, Run %v; want both nil", tt.id, exErr, err)
				}
				if out != tt.want {
					t.Errorf("order_status %s = %q, want %q", tt.id, out, tt.want)
				}
				return
			}
			for what, e := range map[string]error{"Exists": exErr, "Run": err} {
				if !errors.Is(e, tool.ErrNotExist) || errors.Is(e, tool.ErrArgs) {
					t.Fatalf("%s(%s) = %v; want tool.ErrNotExist and not ErrArgs", what, tt.id, e)
				}
				if want := "order " + tt.id + " does not exist"; !strings.Contains(e.Error(), want) {
					t.Errorf("%s(%s): %q, want it to contain %q", what, tt.id, e, want)
				}
			}
			if out != "" {
				t.Errorf("Run for a missing order returned %q", out)
			}
		})
	}
}

func TestOrderStatusRejected(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, args, want string }{
		{"empty id", `{"order_id":""}`, `"order_id" is empty`},
		{"missing id", `{}`, `"order_id" is required`},
		{"no args", ``, `"order_id" is required`},
		{"lower case", `{"order_id":"zam-4471"}`, "required form"},
		{"space", `{"order_id":"ZAM 4471"}`, "required form"},
		{"no digits", `{"order_id":"ZAM-"}`, "required form"},
		{"trailing newline", `{"order_id":"ZAM-4471\n"}`, "required form"},
		{"two ids", `{"order_id":"ZAM-4471,ZAM-1234"}`, "required form"},
		{"one letter", `{"order_id":"Z-1"}`, "required form"},
		{"six letters", `{"order_id":"ZAMZAM-1"}`, "required form"},
		{"eleven digits", `{"order_id":"ZAM-12345678901"}`, "required form"},
		{"wildcard", `{"order_id":"ZAM-*"}`, "required form"},
		{"number", `{"order_id":4471}`, `"order_id" must be a string`},
		{"unknown field", `{"order_id":"ZAM-4471","customer":"x"}`, `unknown field "customer"`},
		{"duplicate key", `{"order_id":"ZAM-9999","order_id":"ZAM-4471"}`, "twice"},
		{"folded key", `{"order_id":"ZAM-4471","ORDER_ID":"ZAM-9999"}`, `unknown field "ORDER_ID"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := desk.OrderStatus(desk.Demo())
			args := json.RawMessage(tt.args)
			out, err := st.Run(t.Context(), args)
			if !errors.Is(err, tool.ErrArgs) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("order_status %s = %q, %v; want ErrArgs containing %q", tt.args, out, err, tt.want)
			}
			if exErr := st.(tool.Exister).Exists(t.Context(), args); !errors.Is(exErr, tool.ErrArgs) {
				t.Errorf("Exists(%s) = %v; want ErrArgs too", tt.args, exErr)
			}
		})
	}
}

func TestOrderStatusCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	st := desk.OrderStatus(desk.Demo())
	args := json.RawMessage(`{"order_id":"ZAM-4471"}`)
	if err := st.(tool.Exister).Exists(ctx, args); !errors.Is(err, context.Canceled) {
		t.Errorf("Exists with a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := st.Run(ctx, args); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestSendReply(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{
		"kontakt@firma.pl",
		"kontakt@klient.pl",
		"Ann.Smith+order-4471@mail.firma.pl",
		"a_b@sub-domain.example.co.uk",
		"x@b.co",
		"o'brien@example.ie",
		"1234567890@123.example",
		strings.Repeat("l", 64) + "@" + strings.Repeat("d", 63) + ".pl",
	} {
		t.Run(addr, func(t *testing.T) {
			t.Parallel()
			s := desk.Demo()
			body := "Your order ZAM-4471 has shipped.\nRegards"
			args, _ := json.Marshal(map[string]string{"address": addr, "body": body})
			out, err := desk.SendReply(s).Run(t.Context(), args)
			if err != nil {
				t.Fatalf("send_reply to %s: %v", addr, err)
			}
			if want := "Sent the reply to " + addr + "."; out != want {
				t.Errorf("send_reply = %q, want %q", out, want)
			}
			if got := s.Replies(); len(got) != 1 || got[0] != (desk.Reply{Address: addr, Body: body}) {
				t.Errorf("replies = %+v", got)
			}
			if err := desk.CheckAddress(addr); err != nil {
				t.Errorf("CheckAddress(%q) = %v", addr, err)
			}
		})
	}
}

func TestSendReplyRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, args string
		want       string
		address    bool // the address itself is refused (ErrAddress)
	}{
		{"display name", `{"address":"Ann <ann@firma.pl>","body":"x"}`, "one plain email address", true},
		{"angle brackets", `{"address":"<ann@firma.pl>","body":"x"}`, "one plain email address", true},
		{"two addresses", `{"address":"ann@firma.pl, bob@obcy.example","body":"x"}`, "second address", true},
		{"two addresses no space", `{"address":"ann@firma.pl,bob@obcy.example","body":"x"}`, `2 "@" signs`, true},
		{"semicolon list", `{"address":"ann@firma.pl;bob@obcy.example","body":"x"}`, `2 "@" signs`, true},
		{"header injection", `{"address":"ann@firma.pl\r\nBcc: bob@obcy.example","body":"x"}`, "line break", true},
		{"newline", `{"address":"ann@firma.pl\n","body":"x"}`, "line break", true},
		{"tab", `{"address":"ann\t@firma.pl","body":"x"}`, "control character", true},
		{"surrounding space", `{"address":" ann@firma.pl","body":"x"}`, "holds a space", true},
		{"comment", `{"address":"ann@firma.pl(boss)","body":"x"}`, "may hold only letters", true},
		{"quoted local part hides an @", `{"address":"\"bob@obcy.example\"@firma.pl","body":"x"}`, `2 "@" signs`, true},
		{"quoted local part", `{"address":"\"ann\"@firma.pl","body":"x"}`, `may not hold '"'`, true},
		{"no at", `{"address":"ann.firma.pl","body":"x"}`, `0 "@" signs`, true},
		{"no local part", `{"address":"@firma.pl","body":"x"}`, `nothing comes before`, true},
		{"no domain", `{"address":"ann@","body":"x"}`, `nothing comes after`, true},
		{"dotless domain", `{"address":"ann@localhost","body":"x"}`, "no dot", true},
		{"ip literal", `{"address":"ann@[10.0.0.1]","body":"x"}`, "may hold only letters", true},
		{"ip address domain", `{"address":"ann@10.0.0.1","body":"x"}`, "not a number", true},
		{"numeric domain name", `{"address":"ann@123.example","body":"x"}`, "", false},
		{"trailing dot domain", `{"address":"ann@firma.pl.","body":"x"}`, "1 to 63", true},
		{"double dot domain", `{"address":"ann@firma..pl","body":"x"}`, "1 to 63", true},
		{"hyphen label", `{"address":"ann@-firma.pl","body":"x"}`, "hyphen", true},
		{"leading dot local", `{"address":".ann@firma.pl","body":"x"}`, "start or end with a dot", true},
		{"double dot local", `{"address":"a..nn@firma.pl","body":"x"}`, "two dots", true},
		{"unicode domain", `{"address":"ann@fírma.pl","body":"x"}`, "xn--", true},
		{"homoglyph domain", `{"address":"ann@firmа.pl","body":"x"}`, "ASCII", true},
		{"unicode local", `{"address":"änn@firma.pl","body":"x"}`, "ASCII", true},
		{"percent route", `{"address":"bob%obcy.example@firma.pl","body":"x"}`, "", false},
		{"local too long", `{"address":"` + strings.Repeat("l", 65) + `@firma.pl","body":"x"}`, "64", true},
		{"label too long", `{"address":"ann@` + strings.Repeat("d", 64) + `.pl","body":"x"}`, "1 to 63", true},
		{"address too long", `{"address":"ann@` + strings.Repeat("d.", 126) + `pl","body":"x"}`, "at most 254", false},
		{"address too short", `{"address":"a@","body":"x"}`, "at least 3", false},
		{"empty address", `{"address":"","body":"x"}`, `"address" is empty`, false},
		{"missing address", `{"body":"x"}`, `"address" is required`, false},
		{"address array", `{"address":["ann@firma.pl"],"body":"x"}`, `"address" must be a string`, false},
		{"empty body", `{"address":"ann@firma.pl","body":""}`, `"body" is empty`, false},
		{"blank body", `{"address":"ann@firma.pl","body":" \n "}`, `"body" is blank`, false},
		{"missing body", `{"address":"ann@firma.pl"}`, `"body" is required`, false},
		{"body too long", `{"address":"ann@firma.pl","body":"` + strings.Repeat("b", desk.MaxBody+1) + `"}`, "at most 20000", false},
		{"unknown field", `{"address":"ann@firma.pl","body":"x","cc":"bob@obcy.example"}`, `unknown field "cc"`, false},
		{"duplicate key", `{"address":"ann@firma.pl","body":"x","address":"bob@obcy.example"}`, "twice", false},
		{"folded key", `{"address":"ann@firma.pl","body":"x","Address":"bob@obcy.example"}`, `unknown field "Address"`, false},
		{"array args", `[]`, "expected a JSON object", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := desk.Demo()
			send := desk.SendReply(s)
			out, err := send.Run(t.Context(), json.RawMessage(tt.args))
			if tt.want == "" { // odd but well-formed: accepted, and the gates judge it
				if err != nil {
					t.Fatalf("send_reply %s: %v; want it accepted", tt.args, err)
				}
				return
			}
			if !errors.Is(err, tool.ErrArgs) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("send_reply %.80s = %q, %v; want ErrArgs containing %q", tt.args, out, err, tt.want)
			}
			if errors.Is(err, desk.ErrAddress) != tt.address {
				t.Errorf("errors.Is(%v, ErrAddress) = %v, want %v", err, !tt.address, tt.address)
			}
			if v := send.(tool.Validator).Validate(json.RawMessage(tt.args)); v == nil || v.Error() != err.Error() {
				t.Errorf("Validate says %v, Run says %v: they must agree", v, err)
			}
			if got := s.Replies(); len(got) != 0 {
				t.Errorf("a refused reply was recorded: %+v", got)
			}
		})
	}
}

func TestSendReplyCancelled(t *testing.T) {
	t.Parallel()
	s := desk.Demo()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := desk.SendReply(s).Run(ctx, json.RawMessage(`{"address":"ann@firma.pl","body":"x"}`))
	if !errors.Is(err, context.Canceled) || len(s.Replies()) != 0 {
		t.Errorf("send_reply with a cancelled context = %v, replies %+v; want context.Canceled and nothing sent", err, s.Replies())
	}
}

// TestGates shows the tools through the gates that already exist: the
// validation gate refuses a bad address before any human is asked, and the
// confirm gate asks before every reply.
func TestGates(t *testing.T) {
	t.Parallel()
	s := desk.Demo()
	send, status := desk.SendReply(s), desk.OrderStatus(s)
	tests := []struct {
		name     string
		tl       tool.Tool
		args     string
		approver approve.Approver
		want     gate.Decision
		wantGate string
	}{
		{"reply approved", send, `{"address":"kontakt@firma.pl","body":"x"}`, approve.Fixed(true), gate.Allow, gate.NameApproval},
		{"reply refused by the human", send, `{"address":"kontakt@firma.pl","body":"x"}`, approve.Fixed(false), gate.Deny, gate.NameApproval},
		{"injection refused first", send, `{"address":"a@firma.pl\nBcc: x@obcy.example","body":"x"}`, approve.Fixed(true), gate.Deny, gate.NameValidation},
		{"status needs no one", status, `{"order_id":"ZAM-4471"}`, approve.Deny{}, gate.Allow, gate.NamePipeline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := gate.NewPipeline(tt.approver, gate.NewAvailability([]string{"send_reply", "order_status"}), gate.Validation{}, gate.Confirm{})
			v := p.Decide(t.Context(), &gate.Call{ID: "1", Name: tt.tl.Spec().Name, Args: json.RawMessage(tt.args), Tool: tt.tl})
			if v.Decision != tt.want || v.Gate != tt.wantGate {
				t.Errorf("verdict %+v, want %v by %s", v, tt.want, tt.wantGate)
			}
		})
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	const n = 64
	s := desk.Demo()
	send, status := desk.SendReply(s), desk.OrderStatus(s)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, e1 := send.Run(t.Context(), json.RawMessage(fmt.Sprintf(`{"address":"user%d@klient.pl","body":"reply %d"}`, i, i)))
			_, e2 := status.Run(t.Context(), json.RawMessage(`{"order_id":"ZAM-1234"}`))
			e3 := status.(tool.Exister).Exists(t.Context(), json.RawMessage(`{"order_id":"ZAM-4471"}`))
			_ = s.Replies()
			errs[i] = errors.Join(e1, e2, e3)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	got := s.Replies()
	var addrs []string
	for _, r := range got {
		addrs = append(addrs, r.Address)
	}
	slices.Sort(addrs)
	if len(slices.Compact(addrs)) != n {
		t.Errorf("%d distinct replies, want %d", len(addrs), n)
	}
	got[0].Body = "changed"
	if s.Replies()[0].Body == "changed" {
		t.Error("Replies returned the store's own slice")
	}
}
