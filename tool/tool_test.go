package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/model"
	"github.com/reinhq/rein/tool"
)

type args struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func (a *args) Check() error {
	if a.Count < 0 {
		return errors.New(`"count" cannot be negative`)
	}
	return nil
}

func echo(name string) tool.Tool {
	return tool.New(tool.Spec{Name: name, Effect: tool.Reversible}, func(_ context.Context, a args) (string, error) {
		return strings.Repeat(a.Name, a.Count), nil
	})
}

func TestFuncDecodesStrictly(t *testing.T) {
	t.Parallel()
	e := echo("echo")
	for _, c := range []struct {
		args    string
		want    string
		wantErr string
	}{
		{`{"name":"ab","count":2}`, "abab", ""},
		{``, "", ""}, // no arguments at all is {}
		{`{}`, "", ""},
		{`{"name":"a","bogus":1}`, "", `unknown field "bogus"`},
		{`{"name":1}`, "", `"name" must be a string`},
		{`[1]`, "", "expected a JSON object, got array"},
		{`{"name":`, "", "expected a JSON object, got invalid JSON"},
		{`{"count":-1}`, "", `"count" cannot be negative`},
		{`{"name":"a","NAME":"b"}`, "", "name the same field"},
	} {
		got, err := e.Run(t.Context(), json.RawMessage(c.args))
		verr := e.(tool.Validator).Validate(json.RawMessage(c.args))
		switch {
		case c.wantErr == "" && (err != nil || got != c.want || verr != nil):
			t.Errorf("%s: got %q, %v (validate %v), want %q", c.args, got, err, verr, c.want)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, tool.ErrArgs)):
			t.Errorf("%s: error %v, want ErrArgs containing %q", c.args, err, c.wantErr)
		case c.wantErr != "" && (verr == nil || verr.Error() != err.Error()):
			t.Errorf("%s: Validate says %v, Run says %v: they must agree", c.args, verr, err)
		}
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	r, err := tool.NewRegistry(echo("b"), echo("a"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Names(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("names %v, want sorted", got)
	}
	if !r.Has("a") || r.Has("c") {
		t.Fatal("Has")
	}
	if defs := r.Defs([]string{"b", "zzz", "a"}); len(defs) != 2 || defs[0].Name != "b" {
		t.Fatalf("defs %+v: want the order asked for, unknown names skipped", defs)
	}
	err = r.CheckNames([]string{"a", "sendmail"})
	if err == nil || !strings.Contains(err.Error(), `"sendmail"`) || !strings.Contains(err.Error(), "known: a, b") {
		t.Fatalf("%v: must name the unknown tool and list the known", err)
	}
	if _, err := tool.NewRegistry(echo("a"), echo("a")); err == nil {
		t.Fatal("two tools with one name")
	}
	if _, err := tool.NewRegistry(echo("")); err == nil {
		t.Fatal("a tool without a name")
	}
}

func TestEffect(t *testing.T) {
	t.Parallel()
	for e, want := range map[tool.Effect]string{tool.ReadOnly: "read-only", tool.Reversible: "reversible", tool.Irreversible: "irreversible"} {
		b, err := e.MarshalText()
		if e.String() != want || string(b) != want || err != nil {
			t.Errorf("%d: %s %q %v", e, e, b, err)
		}
		var back tool.Effect
		if err := back.UnmarshalText(b); err != nil || back != e {
			t.Errorf("%s read back as %s, %v", b, back, err)
		}
	}
	if e := tool.Effect(9); e.String() != "effect(9)" {
		t.Errorf("an unknown effect prints as %s", e)
	}
	if _, err := tool.Effect(9).MarshalText(); err == nil {
		t.Error("an unknown effect was written")
	}
	for _, bad := range []string{"", "Read-only", "readonly", "irreversible ", "deny"} {
		var e tool.Effect
		if err := e.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q read as the effect %s", bad, e)
		}
	}
	var zero tool.Spec
	if zero.Effect != tool.ReadOnly {
		t.Fatal("the zero effect is read-only; tools that act must say so")
	}
}

// TestRunDecoded: what Decode returns runs as it is, and agrees with Run.
func TestRunDecoded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, args, want, wantErr string
	}{
		{"plain", `{"name":"a"}`, "a", ""},
		{"escaped", `{"name":"\u0063url"}`, "curl", ""},
		{"duplicate key", `{"name":"a","name":"../x"}`, "", `key "name" appears twice`},
		{"not an object", `["a"]`, "", "expected a JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := tool.New(tool.Spec{Name: "e", Effect: tool.Reversible,
				Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"count":{"type":"integer"}},"additionalProperties":false}`)},
				func(_ context.Context, a args) (string, error) { return a.Name, nil })
			var v any
			if json.Unmarshal([]byte(c.args), &v) != nil {
				v = nil
			}
			dec, err := e.Decode(json.RawMessage(c.args), v)
			if c.wantErr != "" {
				if err == nil || !errors.Is(err, tool.ErrArgs) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Decode: %v, want ErrArgs containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := e.RunDecoded(t.Context(), dec)
			if err != nil || got != c.want {
				t.Fatalf("RunDecoded: %q, %v; want %q", got, err, c.want)
			}
			if run, err := e.Run(t.Context(), json.RawMessage(c.args)); err != nil || run != got {
				t.Fatalf("Run gives %q, %v; RunDecoded %q: they must agree", run, err, got)
			}
		})
	}
}

func TestRunDecodedRefusesAnotherValue(t *testing.T) {
	t.Parallel()
	e := echo("echo").(*tool.Func[args])
	for _, v := range []any{nil, args{Name: "a", Count: 1}, (*args)(nil), &struct{ Name string }{"a"}, map[string]any{"name": "a"}} {
		if out, _, err := e.RunDecoded(t.Context(), v); err == nil || !errors.Is(err, tool.ErrArgs) {
			t.Errorf("RunDecoded(%#v) = %q, %v: want ErrArgs", v, out, err)
		}
	}
}

func TestDecodeChecksOnce(t *testing.T) {
	t.Parallel()
	n := 0
	f := tool.New(tool.Spec{Name: "c", Effect: tool.Reversible}, func(_ context.Context, a checkedArgs) (string, error) { return a.Path, nil })
	dec, err := f.Decode(json.RawMessage(`{"path":"p"}`), map[string]any{"path": "p"})
	if err != nil {
		t.Fatal(err)
	}
	dec.(*checkedArgs).count = &n // what the decode made is what runs
	if _, _, err := f.RunDecoded(t.Context(), dec); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("RunDecoded ran Check %d times: it must run the value as decoded", n)
	}
}

type checkedArgs struct {
	Path  string `json:"path"`
	count *int
}

func (a *checkedArgs) Check() error {
	if a.count != nil {
		*a.count++
	}
	return nil
}

// TestArgumentNamesAreExact: encoding/json fills a field from a key that
// matches its name only when case is ignored, while every gate reads an
// argument by its exact name; a tool without a closed schema would run
// {"PATH":"/etc/passwd"} after the scope gate found no path argument to
// judge. Such a key is refused, by Decode (the gates' decode) and by Run;
// the exact name, and a key no field matches at all under a struct that
// allows it, still work.
func TestArgumentNamesAreExact(t *testing.T) {
	t.Parallel()
	type args struct {
		Path string `json:"path"`
		Mode string
	}
	var ran []string
	open := tool.New(tool.Spec{Name: "open_tool", Effect: tool.Reversible, Roles: map[string]tool.Role{"path": tool.RolePath}},
		func(_ context.Context, a args) (string, error) { ran = append(ran, a.Path); return "ok", nil })
	for _, bad := range []string{`{"PATH":"/etc/passwd"}`, `{"Path":"/etc/passwd"}`, `{"path":"x","mode":"w"}`} {
		if _, err := open.Decode(json.RawMessage(bad), nil); err == nil || !errors.Is(err, tool.ErrArgs) {
			t.Errorf("Decode(%s) = %v, want ErrArgs", bad, err)
		}
		if _, err := open.Run(t.Context(), json.RawMessage(bad)); err == nil {
			t.Errorf("Run(%s) ran", bad)
		}
	}
	for _, good := range []string{`{"path":"notes.txt"}`, `{"path":"notes.txt","Mode":"w"}`} {
		if _, err := open.Run(t.Context(), json.RawMessage(good)); err != nil {
			t.Errorf("Run(%s): %v", good, err)
		}
	}
	if len(ran) != 2 || ran[0] != "notes.txt" {
		t.Errorf("ran with %q", ran)
	}
}

// imagingFunc is a typed tool that also returns images: the loop would run
// its RunImages on the raw arguments, not the value the gates decoded.
type imagingFunc struct{ *tool.Func[struct{}] }

func (imagingFunc) RunImages(context.Context, json.RawMessage) (string, []model.Image, error) {
	return "", nil, nil
}

// TestRegistryRefusesDecoderImagers: a tool may decode its arguments once
// (Decoder) or return images (Imager), not both.
func TestRegistryRefusesDecoderImagers(t *testing.T) {
	t.Parallel()
	f := tool.New(tool.Spec{Name: "snap"}, func(context.Context, struct{}) (string, error) { return "", nil })
	if _, err := tool.NewRegistry(imagingFunc{f}); err == nil || !strings.Contains(err.Error(), "Imager") {
		t.Fatalf("NewRegistry(a Decoder that is an Imager) = %v", err)
	}
	if _, err := tool.NewRegistry(f); err != nil {
		t.Fatalf("NewRegistry(a plain Func) = %v", err)
	}
}
