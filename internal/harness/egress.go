package harness

import (
	"sync"

	"github.com/reinhq/rein/audit"
	"github.com/reinhq/rein/egress"
	"github.com/reinhq/rein/gate"
)

// EgressLog writes an egress proxy's connections to the session's audit
// log, which exists only after the sandbox is open: what comes before
// waits for it (at most maxPending records). The session's own proxy has
// one; a proxy started before the session (its MCP servers', Spec.Egress)
// has another, whose records name it (Who, in the record's tool field).
type EgressLog struct {
	// Who made the connections, when not the session's commands (the
	// record's tool field): "(mcp servers)".
	Who string
	// Drain, when set, ends the connections whose records come here (it
	// stops what makes them and their proxy) and returns once each is
	// recorded. The session calls it before it closes its audit log, so
	// that a connection still open, or just ended, at the session's end
	// is in the log. Set it before the session starts.
	Drain func()

	mu      sync.Mutex
	w       *audit.Writer
	pending []audit.Record
}

// maxPending bounds what waits for the log.
const maxPending = 1024

// Record is an egress.Config.Record: it writes c to the session's log.
func (l *EgressLog) Record(c egress.Conn) {
	d := gate.Deny
	if c.Allowed {
		d = gate.Allow
	}
	r := audit.Record{
		Type: audit.Egress, Gate: "egress", Decision: audit.DecisionOf(d), Reason: c.Reason, Tool: l.Who,
		DurationMS: float64(c.Duration.Microseconds()) / 1000,
		Conn:       &audit.EgressConn{Proto: c.Proto, Host: c.Host, Port: c.Port, Addr: c.Addr, Up: c.Up, Down: c.Down},
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		if len(l.pending) < maxPending {
			l.pending = append(l.pending, r)
		}
		return
	}
	_ = l.w.Write(r) // a failed log fails the session's next write too, which stops it
}

// attach sends what waited, and everything after, to w.
func (l *EgressLog) attach(w *audit.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w = w
	for _, r := range l.pending {
		_ = w.Write(r)
	}
	l.pending = nil
}

// drain calls Drain, if set.
func (l *EgressLog) drain() {
	if l.Drain != nil {
		l.Drain()
	}
}
