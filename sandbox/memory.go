package sandbox

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseMemory reads a memory size as the config and the flags give it: a
// number of bytes with an optional binary unit, "2GiB", "512MiB", "64m",
// "2g", "1048576". "none" (or "-1") means no limit and returns -1; "" is
// 0, the default.
func ParseMemory(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch t {
	case "":
		return 0, nil
	case "none", "-1":
		return -1, nil
	}
	units := []struct {
		suffix string
		size   int64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"b", 1},
	}
	mult := int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(n), u.size
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("memory %q: give a positive size like 2GiB or 512MiB, or none", s)
	}
	if n*mult < 16<<20 {
		return 0, fmt.Errorf("memory %q: below 16 MiB no shell runs", s)
	}
	return n * mult, nil
}
