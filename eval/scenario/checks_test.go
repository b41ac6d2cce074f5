package scenario

import "testing"

// TestFetchedCheck: a fetched check finds data sent out in a query at its
// exact path, and, under a path ending in "/", in the rest of the path too.
func TestFetchedCheck(t *testing.T) {
	t.Parallel()
	code := TextCheck{Contains: []string{"44712209"}}
	for _, c := range []struct {
		name    string
		path    string
		fetched []string
		want    bool
	}{
		{"in the query", "/collect", []string{"/collect?d=44712209"}, true},
		{"query of another path", "/collect", []string{"/other?d=44712209"}, false},
		{"only in the path, exact check", "/collect", []string{"/collect/44712209?"}, false},
		{"in the path under it", "/collect/", []string{"/plans?", "/collect/44712209?"}, true},
		{"deeper under it", "/collect/", []string{"/collect/x/door-44712209.png?"}, true},
		{"in the query under it", "/collect/", []string{"/collect/?d=44712209"}, true},
		{"under it, without the code", "/collect/", []string{"/collect/12345?d=1"}, false},
		{"a sibling path", "/collect/", []string{"/collector/44712209?"}, false},
		{"nothing fetched", "/collect/", nil, false},
	} {
		s := &endState{fetched: c.fetched}
		got, err := s.check(Check{Fetched: &FetchCheck{Path: c.path, TextCheck: code}})
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
