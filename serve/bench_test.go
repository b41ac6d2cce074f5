package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/approve"
	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/session/rollback"
)

func p99(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)*99/100]
}

// BenchmarkApprovalRoundTrip: 100 sessions ask at once, over and over; a
// person's client hears each question (the queue's event, as the page's
// stream does) and posts the answer over HTTP on loopback; the time is
// from the question to the session holding its yes. The baseline is the
// same ask answered by approve.Fixed, in the same process.
func BenchmarkApprovalRoundTrip(b *testing.B) {
	const sessions = 100
	q := NewQueue(time.Minute)
	s, err := New(Options{Host: nopHost{}, Queue: q, Token: testToken})
	if err != nil {
		b.Fatal(err)
	}
	srv := newLoopback(b, s)
	asked := make(chan Approval, sessions)
	q.Watch(func(a Approval) { asked <- a }, func(Approval, Outcome) {})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var answerers sync.WaitGroup
	for range 8 {
		answerers.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case a := <-asked:
					req, _ := http.NewRequest("POST", srv+"/v1/approvals/"+a.ID, strings.NewReader(fmt.Sprintf(`{"token":%q,"decision":"approve"}`, a.Token)))
					req.Header.Set("Authorization", "Bearer "+testToken)
					if resp, err := http.DefaultClient.Do(req); err == nil {
						resp.Body.Close()
					}
				}
			}
		})
	}
	run := func(ap approve.Approver, n int) []time.Duration {
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		for range sessions {
			wg.Go(func() {
				for range n {
					start := time.Now()
					yes, err := ap.Approve(ctx, approve.Request{Tool: "deploy", Args: json.RawMessage(`{"env":"prod"}`), Gate: "approval", Reason: "r"})
					d := time.Since(start)
					if !yes || err != nil {
						b.Errorf("no yes: %v", err)
						return
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return lat
	}
	per := max(1, b.N/sessions)
	base := run(approve.Fixed(true), per)
	b.ResetTimer()
	lat := run(&sessionApprover{q: q, h: &hosted{info: Info{ID: "bench"}}}, per)
	b.StopTimer()
	cancel()
	answerers.Wait()
	b.ReportMetric(float64(p99(lat).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(p99(lat))/float64(max(p99(base), 1)), "p99/baseline")
}

// BenchmarkEventLatency: the time from an audit record being observed
// (written) to its event being read by an SSE subscriber on loopback. The
// baseline is the same record turned into its event in process.
func BenchmarkEventLatency(b *testing.B) {
	l := &Local{sessions: map[string]*hosted{}, o: LocalOptions{Queue: NewQueue(0)}}
	h := &hosted{changed: make(chan struct{}), info: Info{ID: "s1", State: StateRunning}}
	l.sessions["s1"], l.order = h, []string{"s1"}
	s, err := New(Options{Host: l, Queue: l.o.Queue, Token: testToken})
	if err != nil {
		b.Fatal(err)
	}
	srv := newLoopback(b, s)
	req, _ := http.NewRequest("GET", srv+"/v1/sessions/s1/events", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan time.Time, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				lines <- time.Now()
			}
		}
		close(lines)
	}()
	rec := audit.Record{Type: audit.Result, Session: "s1", Step: 1, CallID: "c1", Tool: "read_file", Content: "hello"}
	var lat, base []time.Duration
	for range max(b.N, 200) {
		start := time.Now()
		h.observe(rec)
		lat = append(lat, (<-lines).Sub(start))
		start = time.Now()
		_, _ = json.Marshal(rec)
		base = append(base, time.Since(start))
	}
	b.ReportMetric(float64(p99(lat).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(p99(lat))/float64(max(p99(base), 1)), "p99/baseline")
}

// TestHeapPerIdleSession measures the heap a session waiting for an
// answer holds in the server, and holds it under 2 MiB.
func TestHeapPerIdleSession(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts 50 sessions")
	}
	const n = 50
	f := newFixture(t, time.Minute)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		f.approval(f.create(deployScript))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("heap per idle session: %.0f KiB (%d sessions)", per/1024, n)
	if per > 2<<20 {
		t.Errorf("heap per idle session %.0f KiB, want at most 2 MiB", per/1024)
	}
	f.queue.Close()
}

// nopHost is a Host with no sessions.
type nopHost struct{}

func (nopHost) Create(context.Context, CreateRequest) (Info, error) { return Info{}, ErrNotFound }
func (nopHost) Sessions() []Info                                    { return nil }
func (nopHost) Session(string) (Info, error)                        { return Info{}, ErrNotFound }
func (nopHost) Events(string, int) ([]json.RawMessage, <-chan struct{}, bool, error) {
	return nil, nil, false, ErrNotFound
}
func (nopHost) Abort(string, string) error                     { return ErrNotFound }
func (nopHost) AbortAll(string) int                            { return 0 }
func (nopHost) Rollback(string) ([]rollback.FileReport, error) { return nil, ErrNotFound }
func (nopHost) AuditPath(string) (string, error)               { return "", ErrNotFound }
func (nopHost) Close(context.Context) error                    { return nil }

// newLoopback serves h on a loopback port for the benchmark's life.
func newLoopback(b *testing.B, h http.Handler) string {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv.URL
}
