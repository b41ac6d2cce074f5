package sandbox

import "testing"

func TestParseMemory(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"", 0, true}, {"none", -1, true}, {"2GiB", 2 << 30, true}, {"512MiB", 512 << 20, true},
		{"64m", 64 << 20, true}, {"2g", 2 << 30, true}, {"1 GiB", 1 << 30, true}, {"33554432", 32 << 20, true},
		{"0", 0, false}, {"-5m", 0, false}, {"1k", 0, false}, {"lots", 0, false}, {"2.5g", 0, false}, {"99999999999T", 0, false},
	} {
		got, err := ParseMemory(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
