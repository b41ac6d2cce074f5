package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// NotifierOptions configure webhooks.
type NotifierOptions struct {
	// URL receives a POST for each pending approval and each stop.
	URL string
	// PageURL is the web page's base URL, for the links.
	PageURL string
	// Client is the HTTP client; nil is one with a 10 s timeout.
	Client *http.Client
	// Attempts is how often a notification is tried (0: 5); Backoff the
	// first wait between tries, doubled each time (0: 1 s).
	Attempts int
	Backoff  time.Duration
	// Queue is how many notifications may wait (0: 256); beyond that new
	// ones are dropped (and logged): a notification never blocks a session.
	Queue int
	Log   *slog.Logger
}

// Notification is the JSON body of a webhook: "text" is what a chat
// tool's incoming webhook shows; the rest is for programs.
type Notification struct {
	Text     string    `json:"text"`
	Kind     string    `json:"kind"` // "approval" or "stop"
	Session  string    `json:"session"`
	Link     string    `json:"link"`
	Approval *Approval `json:"approval,omitempty"`
	Stop     *StopInfo `json:"stop,omitempty"`
}

// Notifier posts notifications from one goroutine, with retries and
// backoff, from a bounded queue.
type Notifier struct {
	o      NotifierOptions
	ch     chan Notification
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewNotifier starts the notifier's goroutine; Close ends it.
func NewNotifier(o NotifierOptions) *Notifier {
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.Queue <= 0 {
		o.Queue = 256
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	n := &Notifier{o: o, ch: make(chan Notification, o.Queue)}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.wg.Add(1)
	go n.loop()
	return n
}

// Asked notifies of a pending approval (without its token: the link leads
// to the page, where a signed-in person answers).
func (n *Notifier) Asked(a Approval) {
	a.Token = ""
	what := "the call " + a.Tool
	if a.Kind == KindQuestion {
		what = "a question"
	}
	n.send(Notification{
		Text: fmt.Sprintf("rein: session %s asks about %s (%s: %s). No answer by %s UTC is No. %s",
			a.Session, what, a.Gate, clip(a.Reason, 200), a.Expires.UTC().Format("15:04:05"), n.link(a.Session)),
		Kind: "approval", Session: a.Session, Link: n.link(a.Session), Approval: &a,
	})
}

// Stopped notifies of a session's end.
func (n *Notifier) Stopped(i Info) {
	if i.Stop == nil {
		return
	}
	n.send(Notification{
		Text: fmt.Sprintf("rein: session %s stopped: %s. %s", i.ID, i.Stop.Reason, n.link(i.ID)),
		Kind: "stop", Session: i.ID, Link: n.link(i.ID), Stop: i.Stop,
	})
}

func (n *Notifier) link(session string) string { return n.o.PageURL + "/sessions/" + session }

// send queues a notification, or drops it when the queue is full.
func (n *Notifier) send(m Notification) {
	select {
	case n.ch <- m:
	default:
		n.o.Log.Warn("webhook queue full: notification dropped", "session", m.Session, "kind", m.Kind)
	}
}

func (n *Notifier) loop() {
	defer n.wg.Done()
	for {
		select {
		case <-n.ctx.Done():
			return
		case m := <-n.ch:
			n.deliver(m)
		}
	}
}

// deliver tries m until a 2xx, Attempts tries, or Close.
func (n *Notifier) deliver(m Notification) {
	body, err := json.Marshal(m)
	if err != nil {
		return
	}
	wait := n.o.Backoff
	for try := 1; ; try++ {
		err := n.post(body)
		if err == nil {
			return
		}
		if try >= n.o.Attempts {
			n.o.Log.Warn("webhook failed: giving up", "session", m.Session, "kind", m.Kind, "tries", try, "err", err)
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-n.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait *= 2
	}
}

func (n *Notifier) post(body []byte) error {
	req, err := http.NewRequestWithContext(n.ctx, http.MethodPost, n.o.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.o.Client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook: %s", resp.Status)
	}
	return nil
}

// Close stops the notifier: what is queued is sent until ctx ends.
func (n *Notifier) Close(ctx context.Context) {
	drained := make(chan struct{})
	go func() {
		for len(n.ch) > 0 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		close(drained)
	}()
	select {
	case <-drained:
	case <-ctx.Done():
	}
	n.cancel()
	n.wg.Wait()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
