package mail_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/mail"
)

func testInbox() *mail.Inbox {
	return mail.NewInbox(
		mail.Email{ID: "m1", From: "kim@studio.example", Subject: "Workshop", Date: "2026-05-02", Body: "Moved to 14 May."},
		mail.Email{ID: "m2", From: "billing@host.example", Subject: "Invoice", Date: "2026-05-03", Body: "Amount due: 1249 kr"},
		mail.Email{ID: "m1", From: "kim@studio.example", Subject: "Workshop (updated)", Date: "2026-05-02", Body: "Moved to 15 May."},
	)
}

func TestInboxSpecs(t *testing.T) {
	t.Parallel()
	in := testInbox()
	for _, tl := range []tool.Tool{mail.ListInbox(in), mail.ReadEmail(in)} {
		spec := tl.Spec()
		if spec.Effect != tool.ReadOnly {
			t.Errorf("%s: effect %v, want read-only", spec.Name, spec.Effect)
		}
		if !json.Valid(spec.Schema) {
			t.Errorf("%s: schema is not valid JSON", spec.Name)
		}
	}
	if got := mail.SendEmail(&mail.Outbox{}).Spec().Roles["to"]; got != tool.RoleRecipient {
		t.Errorf("send_email's to has role %v, want recipient", got)
	}
	if in.Len() != 2 {
		t.Errorf("Len = %d, want 2 (a later message with the same id replaces the earlier)", in.Len())
	}
}

func TestListInbox(t *testing.T) {
	t.Parallel()
	list := mail.ListInbox(testInbox())
	tests := []struct {
		name, args string
		want       []string
		not        []string
	}{
		{"all", `{}`, []string{"m1 | 2026-05-02 | from kim@studio.example | Workshop (updated)", "m2 |"}, []string{"Moved to"}},
		{"from filter, any case", `{"from":"BILLING"}`, []string{"m2 |"}, []string{"m1 |"}},
		{"no match", `{"from":"nobody"}`, []string{`No message from "nobody"`, "2 message(s)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := list.Run(t.Context(), json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output %q lacks %q", out, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("output %q holds %q", out, n)
				}
			}
		})
	}
}

func TestReadEmail(t *testing.T) {
	t.Parallel()
	read := mail.ReadEmail(testInbox())
	out, err := read.Run(t.Context(), json.RawMessage(`{"id":"m1"}`))
	if err != nil || !strings.Contains(out, "Moved to 15 May.") || !strings.Contains(out, "from: kim@studio.example") {
		t.Errorf("read m1 = %q, %v", out, err)
	}
	tests := []struct {
		name, args string
		want       error
	}{
		{"unknown id", `{"id":"m9"}`, tool.ErrNotExist},
		{"no id", `{}`, tool.ErrArgs},
		{"extra field", `{"id":"m1","all":true}`, tool.ErrArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := read.Run(t.Context(), json.RawMessage(tt.args)); !errors.Is(err, tt.want) {
				t.Errorf("Run(%s) error = %v, want %v", tt.args, err, tt.want)
			}
		})
	}
	// The existence gate's lookup says the same before the tool runs.
	ex := read.(tool.Exister)
	if err := ex.Exists(t.Context(), json.RawMessage(`{"id":"m9"}`)); !errors.Is(err, tool.ErrNotExist) {
		t.Errorf("Exists(m9) = %v, want ErrNotExist", err)
	}
	if err := ex.Exists(t.Context(), json.RawMessage(`{"id":"m2"}`)); err != nil {
		t.Errorf("Exists(m2) = %v", err)
	}
}
