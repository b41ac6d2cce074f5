package netguard

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const corpusDir = "../testdata/corpus"

// readCorpus returns the URLs of a corpus file: one a line, blank lines and
// lines starting with # ignored.
func readCorpus(tb testing.TB, name string) []string {
	tb.Helper()
	f, err := os.Open(filepath.Join(corpusDir, name))
	if err != nil {
		tb.Fatalf("corpus: %v", err)
	}
	defer f.Close()
	var urls []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		urls = append(urls, line)
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("corpus %s: %v", name, err)
	}
	if len(urls) == 0 {
		tb.Fatalf("corpus %s has no URLs", name)
	}
	return urls
}

func TestCorpusInternal(t *testing.T) {
	t.Parallel()
	urls := readCorpus(t, "url-internal.txt")
	refusedN := 0
	for _, u := range urls {
		got, err := CheckURL(u, nil)
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("CheckURL(%q) = %v, %v; want refused", u, got, err)
			continue
		}
		refusedN++
	}
	t.Logf("url-internal.txt: %d of %d refused", refusedN, len(urls))
}

func TestCorpusPublic(t *testing.T) {
	t.Parallel()
	urls := readCorpus(t, "url-public.txt")
	allowedN := 0
	for _, u := range urls {
		if _, err := CheckURL(u, nil); err != nil {
			t.Errorf("CheckURL(%q) = %v; want allowed", u, err)
			continue
		}
		allowedN++
	}
	t.Logf("url-public.txt: %d of %d allowed", allowedN, len(urls))
}

// BenchmarkCheckURL runs CheckURL over both corpus files; ns/op is per URL.
func BenchmarkCheckURL(b *testing.B) {
	urls := append(readCorpus(b, "url-internal.txt"), readCorpus(b, "url-public.txt")...)
	p := &Policy{}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_, _ = CheckURL(urls[i%len(urls)], p)
		i++
	}
}
