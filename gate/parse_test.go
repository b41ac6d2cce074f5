package gate

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestParseFast: the shapes tool arguments come in take the fast path and
// give what encoding/json gives; what it leaves goes to encoding/json.
func TestParseFast(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		doc  string
		fast bool // parseFast handles it itself
	}{
		{`{"command":"ls -la | grep \"x\" > /dev/null\n"}`, true},
		{` { "url" : "https://example.com/a?b=c" , "n": -1.5e3, "ok": true, "no": false, "x": null } `, true},
		{`{"items":[{"id":"a","title":"t"},[],{}],"a":{"b":{"c":[1,2,0.5]}}}`, true},
		{`{"k":"\u00e9\u0041\/\b\f\r\t\\"}`, true},
		{`{"k":"\u0000"}`, true},
		{`{"a":1,"a":2}`, true}, // the last value, as encoding/json
		{`[]`, true}, {`{}`, true}, {`"s"`, true}, {`0`, true}, {`-0`, true}, {`null`, true},
		{`{"k":"é"}`, false},               // beyond ASCII: encoding/json replaces invalid UTF-8
		{`{"k":"\ud83d\ude00"}`, false},    // surrogates
		{`{"k":"\ud800"}`, false},          // a lone one
		{`{"n":1e400}`, false},             // out of range: encoding/json fails the whole value
		{`{"k":"a` + "\x01" + `"}`, false}, // control character: invalid
		{`{"a":1}x`, false}, {`{"a":1,}`, false}, {`{"a" 1}`, false}, {`{a:1}`, false}, {`[1,]`, false},
		{`01`, false}, {`1.`, false}, {`.5`, false}, {`1e`, false}, {`-`, false}, {`+1`, false},
		{`tru`, false}, {`nul`, false}, {``, false}, {`"\x"`, false}, {`"\u12"`, false}, {`"\u12g4"`, false},
		{`"a\`, false}, {`"a\"`, false},
	} {
		v, ok := parseFast([]byte(c.doc))
		if ok != c.fast {
			t.Errorf("%s: fast=%v, want %v", c.doc, ok, c.fast)
		}
		agreeJSON(t, []byte(c.doc), v, ok)
	}
	deep := `{"a":` // nested past the bound
	for range maxFastDepth + 2 {
		deep += `[`
	}
	if _, ok := parseFast([]byte(deep)); ok {
		t.Error("nesting past maxFastDepth took the fast path")
	}
}

// agreeJSON fails when parseFast accepted data but encoding/json does not,
// or gives a different value.
func agreeJSON(t *testing.T, data []byte, v any, ok bool) {
	t.Helper()
	if !ok {
		return
	}
	var ref any
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("%q: parseFast accepted it, encoding/json says %v", data, err)
	}
	if !reflect.DeepEqual(v, ref) {
		t.Fatalf("%q: parseFast gives %#v, encoding/json %#v", data, v, ref)
	}
}

// FuzzParseFast is the differential test: whatever parseFast accepts,
// encoding/json parses to the same value. (What it refuses, the gates
// parse with encoding/json.)
//
//	go test -run '^$' -fuzz FuzzParseFast ./gate
func FuzzParseFast(f *testing.F) {
	for _, s := range []string{
		`{"command":"find . -name '*.go' -exec grep -l \"x\" {} \\;"}`, `{"url":"http://[::1]:8080/"}`,
		`{"path":"a.txt","offset":1,"limit":2000}`, `{"items":[{"id":"a","title":"t"}]}`, `{"a":{"b":[true,false,null]}}`,
		`{"k":"\u00e9\ud83d\ude00"}`, `{"n":-0.0e-0}`, `{"n":1E+2}`, ` [ ] `, `"\u002F"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ok := parseFast(data)
		agreeJSON(t, data, v, ok)
	})
}
