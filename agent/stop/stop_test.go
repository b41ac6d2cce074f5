package stop_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/reinhq/rein/agent/stop"
)

func TestReasonRoundTrip(t *testing.T) {
	t.Parallel()
	for _, r := range stop.Reasons() {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if want := `"` + string(r) + `"`; string(b) != want {
			t.Errorf("marshal %s = %s, want %s", r, b, want)
		}
		var got stop.Reason
		if err := json.Unmarshal(b, &got); err != nil || got != r {
			t.Errorf("unmarshal %s = %q, %v", b, got, err)
		}
	}
}

func TestReasonRefusesUnknown(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`"Done"`, `"finished"`, `"done "`, `"deny"`} {
		var r stop.Reason
		if err := json.Unmarshal([]byte(in), &r); !errors.Is(err, stop.ErrUnknown) {
			t.Errorf("unmarshal %s: err = %v, want ErrUnknown", in, err)
		}
	}
	if _, err := json.Marshal(stop.Reason("halted")); !errors.Is(err, stop.ErrUnknown) {
		t.Errorf("marshal an unknown reason: err = %v, want ErrUnknown", err)
	}
	var r stop.Reason
	if err := json.Unmarshal([]byte(`""`), &r); err != nil || r != "" {
		t.Errorf(`unmarshal "" = %q, %v; want the zero reason`, r, err)
	}
}
