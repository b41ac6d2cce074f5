package tool_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/reinhq/rein/internal/harness"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/desk"
)

// FuzzValidateValueAgrees is the differential test of the validation
// gate's fast path: for every built-in tool and any JSON document,
// ValidateValue (fast schema check, typed fields filled from the parsed
// value) accepts exactly what Validate (jsonschema, then json.Unmarshal)
// accepts, with the same message, and what it decoded is what
// json.Unmarshal decodes.
//
//	go test -run '^$' -fuzz FuzzValidateValueAgrees ./tool
func FuzzValidateValueAgrees(f *testing.F) {
	reg, err := harness.Tools(harness.Env{Extra: deskTools()})
	if err != nil {
		f.Fatal(err)
	}
	var tools []tool.ValueValidator
	for _, n := range reg.Names() {
		t, _ := reg.Lookup(n)
		if vv, ok := t.(tool.ValueValidator); ok {
			tools = append(tools, vv)
		}
	}
	for _, seed := range []string{
		`{"command":"ls -la","timeout_s":30,"workdir":"src"}`, `{"command":"x","timeout_s":600.0}`, `{"command":" "}`,
		`{"command":"a\u0000"}`, `{"command":"a","command":"b"}`, `{"command":"ls","workdir":"a\u0000"}`,
		`{"url":"https://example.com/"}`, `{"url":"ftp://x"}`, `{"path":"a.txt","offset":1,"limit":2000}`,
		`{"path":"a","old_string":"x","new_string":"","replace_all":true}`, `{"content":"","append":true}`,
		`{"items":[{"id":"a","title":"t"}]}`, `{"id":"a","status":"done"}`, `{"order_id":"ZAM-4471"}`,
		`{"to":"a@b.c","body":"b"}`, `{"expression":"1+2"}`, `{"pattern":"*.go","path":"src"}`, `{}`,
	} {
		for i := range tools {
			f.Add([]byte(seed), uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte, which uint8) {
		var v any
		if json.Unmarshal(doc, &v) != nil {
			return // the gate sends what does not parse to Validate itself
		}
		vv := tools[int(which)%len(tools)]
		name := vv.(tool.Tool).Spec().Name
		dec, err := vv.ValidateValue(doc, v)
		ref := vv.Validate(doc)
		switch {
		case (err == nil) != (ref == nil):
			t.Fatalf("%s %s: ValidateValue says %v, Validate says %v", name, doc, err, ref)
		case err != nil && err.Error() != ref.Error():
			t.Fatalf("%s %s: messages differ:\n%v\n%v", name, doc, err, ref)
		case err != nil:
			return
		case dec == nil:
			t.Fatalf("%s %s: accepted but not decoded: the tool would have to decode it again", name, doc)
		}
		want := reflect.New(reflect.TypeOf(dec).Elem())
		if err := json.Unmarshal(doc, want.Interface()); err != nil {
			t.Fatalf("%s %s: accepted, but json.Unmarshal fails: %v", name, doc, err)
		}
		if !reflect.DeepEqual(dec, want.Interface()) {
			t.Fatalf("%s %s: decoded %+v, json.Unmarshal gives %+v", name, doc, dec, want.Interface())
		}
	})
}

// deskTools are the support desk's tools, which the assembly no longer
// builds itself: a session gets them as caller-supplied tools.
func deskTools() []tool.Tool {
	s := desk.NewStore()
	return []tool.Tool{desk.OrderStatus(s), desk.SendReply(s)}
}
